/**
 * The editor's canvas against the api's. The OpenAPI document describes `canvas_json` from the
 * contracts' canvas model (`konnectz_contracts.canvas`), generated into `schema.d.ts`; these
 * type-level checks fail `npm run typecheck` (and so `make test`) when what the editor saves no
 * longer fits what the api reads. The api keeps keys it does not know (its models allow extra
 * keys, the generated types' index signatures), so those are left out of the comparison; and a
 * field with a default is optional when the api reads it (openapi-typescript marks it required, as
 * in a reply), so every field is compared as optional: the check is that each field both sides
 * know has a type the api accepts.
 */
import type { components } from '../../api/schema';
import type { AppDetail, FlowLink, RunControlSettings, SavedNode } from './types';

/** T without index signatures, all the way down. */
type Known<T> = T extends readonly (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]?: Known<T[K]> }
    : T;

export type ApiCanvas = components['schemas']['Canvas'];
export type ApiNode = ApiCanvas['apps'][number];
export type ApiLink = components['schemas']['Link'];

type Fits<From, To> = [From] extends [Known<To>] ? true : false;
function fits<T extends true>(): T | undefined {
  return undefined;
}

type ApiData = NonNullable<ApiNode['data']>;

// The node's envelope (id, React Flow type, position), its app, and the links. A kind's own data
// is typed in its folder (web/src/editor/nodes/<kind>/) and not compared here yet.
fits<Fits<Omit<SavedNode, 'data'>, Omit<ApiNode, 'data'>>>();
fits<Fits<AppDetail, NonNullable<ApiData['app_detail']>>>();
fits<Fits<FlowLink, ApiLink>>();
// The flow's Run settings (canvas_json.runControl).
fits<Fits<RunControlSettings, components['schemas']['CanvasRunControl']>>();
