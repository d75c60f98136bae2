/** The editor's constants, messages and pure rules (canvas spec §4, §5, §8, §9). */
import { OAUTH_POLL_MS } from '../../accounts/constants';
import { ApiError } from '../../api/typed';
import { COPIED_FEEDBACK_MS } from '../../lib/constants';
import type { ConfigResponse, FlowNode, FlowNodeData } from './types';

// §9 constants
export const TOAST_MS = 2500;
export const WEBHOOK_POLL_MS = 7000;
/** 'Copied' feedback: the shared CopyButton's. */
export const COPIED_MS = COPIED_FEEDBACK_MS;
/** The account (OAuth) popup's polling: the accounts area's. */
export const ACCOUNT_POPUP_POLL_MS = OAUTH_POLL_MS;
export const SCRIPT_POPUP_POLL_MS = 1000;
export const POPUP_WIDTH = 800;
export const POPUP_HEIGHT = 600;
export const MIN_VISIBLE_FIELDS = 5;
export const MANAGE_FIELDS_ABOVE = 5;
export const RESPONSE_PREVIEW = 3;
export const LONG_TEXT = 42;
export const PICKER_FIRST_PAGE = 80;
export const PICKER_PAGE_STEP = 20;
export const PICKER_MAX = 1000;

// §8 messages
export const MSG = {
  notManageable: (app: string) => `${app} is not manageable.`,
  integerOnly: 'Please Fill Integer Only',
  invalidExpiry: 'Please Fill Valid Expiry Number',
  mandatory: 'Please fill the values of mandatory fields before Testing',
  testTriggerFirst: (app: string) => `Test Your ${app} after testing your Triggering app`,
  noTrigger: 'As you have not choosed trigger,Please make valid flow to save it',
  triggerDelete: 'Cannot delete Trigger while Action present.',
  triggerDeleteHint: 'Trigger cannot be deleted when an action app is present.',
  moveBackward: 'Can not be move backward as Action app exists',
  iteratorOnce: 'The iterator can only be used once.',
  sameSourceTarget: 'The same app cannot serve as both the source and the target for a particular app.',
  webhookMissed: "Sorry, we couldn't catch the webhook! Could you please try again?",
  noEvents: "Couldn't find any events linked with this app! Please give it another try.",
  authorize: "App events linked with this app couldn't be found! Please Authorize it.",
  noConfigs: "Oops! Something went wrong; we couldn't retrieve the configs. Please try again.",
  noDetails: "Oops! We couldn't fetch app details. Please provide the appropriate inputs.",
  nextFieldFailed: 'OOps!! could not fetch app details.Give appropriate inputs',
  noDetailsConfigs: "Apologies, we couldn't fetch app details/configs. Please provide the necessary inputs.",
  testFailed: 'Unable to process the test with these inputs. Please provide appropriate inputs.',
  noAccountsTrigger: 'Please Manage the app by authorizing the accounts as you have no accounts authorised',
  noAccountsAction: 'Please Manage the app by authorizing the accounts',
} as const;

export const FILTER_OPERATORS = [
  'Lesser Than',
  'Greater Than',
  'Is Exist',
  'Does Not Exist',
  'Start With',
  'Does Not Start With',
  'End With',
  'Does Not End With',
  'Equal To',
  'Does Not Equal To',
  'Contain String',
  'Does Not Contain String',
] as const;

/** Operators that test presence only: they take no value. */
export const VALUELESS_OPERATORS = new Set(['Is Exist', 'Does Not Exist']);

export const DELAY_TYPES = [
  { id: 515, name: 'Delay for' },
  { id: 328, name: 'Delay Until' },
] as const;
export const DELAY_FOR = 515;
export const DELAY_UNTIL = 328;
export const DELAY_UNITS = [
  { id: 514, name: 'Minutes' },
  { id: 322, name: 'Hours' },
  { id: 511, name: 'Days' },
  { id: 3228, name: 'Weeks' },
] as const;

export const SPLITTER_SEGMENTS = ['First', 'Second', 'Last', 'Second to Last', 'All'] as const;
export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
export const MONTH_DATES = Array.from({ length: 31 }, (_, i) => i + 1);
export const SCHEDULE_KINDS = [
  { value: 'Once', label: 'Once' },
  { value: 'Everyday', label: 'Every day' },
  { value: 'DaysOfTheWeek', label: 'Days of the week' },
  { value: 'DaysOfTheMonth', label: 'Days of the month' },
  { value: 'AtRegularIntervals', label: 'At regular intervals' },
] as const;
export const TIME_SPANS = ['Minutes', 'Hours', 'Days', 'Weeks'] as const;
export const EVERY_HINT: Record<string, string> = { Minutes: '1 to 59', Hours: '1 to 24' };

/** True for whole numbers typed in a form ('12'); the delay and expiry fields accept only these. */
export function isInteger(text: string): boolean {
  return /^\d+$/.test(text.trim());
}

/** A node is an in-house add-on (its events need no account). */
export function isInHouse(data: FlowNodeData): boolean {
  return data.app_detail.app_type !== 'api';
}

/**
 * §4: at least 5 configuration fields are visible: the required ones, then optional ones to fill
 * up to 5. Fields the user switched on or off in Manage Fields keep that choice (`checked`).
 */
export function withVisibility(fields: ConfigResponse[]): ConfigResponse[] {
  const inputs = fields.filter((f) => !f.additional);
  let optionalShown = Math.max(0, MIN_VISIBLE_FIELDS - inputs.filter((f) => f.config_key_required).length);
  return fields.map((f) => {
    if (f.additional) return f;
    if (f.checked !== undefined) return { ...f, visible: f.checked || Boolean(f.config_key_required) };
    if (f.config_key_required) return { ...f, visible: true };
    const visible = optionalShown > 0;
    if (visible) optionalShown -= 1;
    return { ...f, visible };
  });
}

/** Add More Fields shows when hidden input fields exist; Manage Fields above 5 input fields. */
export function hiddenFieldCount(fields: ConfigResponse[]): number {
  return fields.filter((f) => !f.additional && !f.visible).length;
}
export function showManageFields(fields: ConfigResponse[]): boolean {
  return fields.filter((f) => !f.additional).length > MANAGE_FIELDS_ABOVE;
}

/** Required fields without a value (testing is refused with MSG.mandatory). */
export function missingMandatory(fields: ConfigResponse[] | undefined): ConfigResponse[] {
  return (fields ?? []).filter(
    (f) => !f.additional && f.config_key_required && (f.value === undefined || f.value === null || String(f.value).trim() === ''),
  );
}

export function isSuccess(status: string | null | undefined): boolean {
  return (status ?? '').toLowerCase() === 'success';
}

/** Dotted output keys of a test response (what later nodes reference), arrays by index. */
export function outputKeys(raw: unknown, prefix = '', depth = 0, out: string[] = []): string[] {
  if (out.length >= 200 || depth > 5) return out;
  if (raw && typeof raw === 'object') {
    const entries = Array.isArray(raw) ? raw.slice(0, 3).map((v, i) => [String(i), v] as const) : Object.entries(raw);
    for (const [k, v] of entries) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === 'object' && Object.keys(v).length > 0) outputKeys(v, path, depth + 1, out);
      else out.push(path);
    }
  }
  return out;
}

/** Key/value rows of a response, flattened, for the response panel. */
export function responseEntries(raw: unknown): { key: string; value: string }[] {
  return outputKeys(raw).map((key) => {
    let v: unknown = raw;
    for (const part of key.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
    return { key, value: v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v) };
  });
}

export function isTrigger(node: FlowNode): boolean {
  return node.data.app_detail.app_index === 1;
}

/**
 * The message when an event's configuration cannot be loaded: the account is not (or no longer)
 * authorised (401/403 from the app through the api) asks to authorise it; anything else to retry.
 */
export function configLoadFailure(err: unknown): string {
  return err instanceof ApiError && (err.status === 401 || err.status === 403) ? MSG.authorize : MSG.noConfigs;
}

/** §4 Save and publish: saving needs a chosen trigger that was tested (it has a konnect_id). */
export function canSave(apps: FlowNode[], konnectId: number | null): boolean {
  return apps.some(isTrigger) && konnectId !== null;
}
