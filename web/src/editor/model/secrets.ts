/**
 * Secrets typed into steps: which API Call header and param rows get the lock by default, and the mask
 * every reply shows in place of a stored secret value (see docs/account.md, "Secrets typed into steps").
 *
 * The list is the api's (`konnectz_api.step_secrets`): the OpenAPI document carries it as the
 * `SecretNames` schema, so src/api/schema.d.ts has it as types, and `tsc` fails here when these
 * constants and the generated types differ (after `make gen-types`).
 */
import type { components } from '../../api/schema';

type SecretNames = components['schemas']['SecretNames'];
type Name = SecretNames['names'][number];
type NamePart = SecretNames['name_parts'][number];

/** What the api answers (and accepts back, meaning "keep the stored value") for a secret value. */
export const SECRET_MASK: Required<SecretNames>['mask'] = '••••••';
/** Whole names (lower case) secret by default. */
export const SECRET_NAMES = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'x-auth-token',
] as const satisfies readonly Name[];
/** A name (lower case) containing one of these is secret by default. */
export const SECRET_NAME_PARTS = ['token', 'secret', 'password', 'apikey', 'api-key', 'api_key'] as const satisfies readonly NamePart[];

// Both directions: every name of the api's list is here, and nothing else (`satisfies` above).
type Exactly<T extends true> = T;
export type SecretListsMatchTheApi = Exactly<
  [Exclude<Name, (typeof SECRET_NAMES)[number]>, Exclude<NamePart, (typeof SECRET_NAME_PARTS)[number]>] extends [never, never]
    ? true
    : false
>;

/** True when a header or param named `name` is secret by default (case-insensitive). */
export function isDefaultSecret(name: string): boolean {
  const lowered = name.trim().toLowerCase();
  return (SECRET_NAMES as readonly string[]).includes(lowered) || SECRET_NAME_PARTS.some((part) => lowered.includes(part));
}
