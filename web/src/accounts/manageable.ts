/**
 * Which apps have accounts to manage.
 *
 * The spec refuses Manage Accounts for the trigger node (app_index 1) whose provider is `webhook`,
 * for app_type `webhook_api`, and for add-ons. Apps that need no account at all (auth_type null in
 * the catalogue: add-ons, webhooks) have nothing to manage either.
 */
import { notManageableMessage } from './constants';

/** The fields of an app (catalogue entry or node `app_detail`) the account components read. */
export interface ManagedApp {
  id: number;
  name: string;
  /** `OAuth2` opens the authorisation popup, `Token` asks for fields, null needs no account. */
  auth_type?: string | null;
  app_type?: string | null;
  provider?: string | null;
}

const ADD_ON_TYPES = new Set(['ADD_ON', 'add_on']);

/** True when the app's accounts can be managed; `appIndex` is the node's position (1 = trigger). */
export function isManageable(app: ManagedApp, appIndex?: number): boolean {
  if (appIndex === 1 && app.provider?.toLowerCase() === 'webhook') return false;
  if (app.app_type === 'webhook_api') return false;
  if (app.app_type && ADD_ON_TYPES.has(app.app_type)) return false;
  if (app.auth_type === null) return false;
  return true;
}

/** The refusal toast for `app`, or null when its accounts can be managed. */
export function manageRefusal(app: ManagedApp, appIndex?: number): string | null {
  return isManageable(app, appIndex) ? null : notManageableMessage(app.name);
}
