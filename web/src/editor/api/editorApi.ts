/**
 * The calls the editor makes, over the typed client (a route or query that does not exist fails
 * `tsc`). Each function returns the reply body or throws `ApiError` with the server's body.
 */
import { fetchClient } from '../../api/typed';
import type { components } from '../../api/schema';
import type { CanvasJson } from '../model/types';

export type AppOut = components['schemas']['AppOut'];
export type AppEventOut = components['schemas']['AppEventOut'];
export type EventConfigOut = components['schemas']['EventConfigOut'];
export type AppAccountOut = components['schemas']['AppAccountOut'];
export type TestOut = components['schemas']['TestAndReviewOut'];
export type CaptureOut = components['schemas']['CaptureOut'];
export type AppListing = 'triggers' | 'actions' | 'addOns' | 'all';
type Side = 'left' | 'right';

function data<T>(res: { data?: T; error?: unknown }): T {
  if (res.data === undefined) throw res.error ?? new Error('empty reply');
  return res.data;
}

const LIST_PATHS = {
  triggers: '/api/v1/apps/get_triggers',
  actions: '/api/v1/apps/get_actions',
  addOns: '/api/v1/apps/add_on_apps',
  all: '/api/v1/apps',
} as const;

export async function listApps(listing: AppListing, search: string, pageSize: number) {
  const query = { page_size: pageSize, page_index: 1, ...(search ? { search_query: search } : {}) };
  return data(await fetchClient.GET(LIST_PATHS[listing], { params: { query } }));
}

export async function appEvents(appId: number, side: Side) {
  return data(await fetchClient.GET('/api/v1/apps/{app_id}/app_events', { params: { path: { app_id: appId }, query: { side } } }));
}

export async function eventConfig(appId: number, eventKey: string, side: Side, accountId: number | null) {
  return data(
    await fetchClient.GET('/api/v1/apps/{app_id}/app_events/{event_key}/event_config/{side}', {
      params: { path: { app_id: appId, event_key: eventKey, side }, query: accountId ? { app_account_id: accountId } : {} },
    }),
  );
}

/** Options of one field; `chosen` carries the values picked so far (field key = value). */
export async function configDetails(
  appId: number,
  eventKey: string,
  side: Side,
  configKey: string,
  opts: { accountId: number | null; prevSequence?: number; chosen: Record<string, string> },
) {
  const query = {
    ...opts.chosen,
    ...(opts.accountId ? { app_account_id: opts.accountId } : {}),
    ...(opts.prevSequence !== undefined ? { prevSequence: opts.prevSequence } : {}),
  } as { app_account_id?: number; prevSequence?: number };
  return data(
    await fetchClient.GET('/api/v1/apps/{app_id}/app_events/{event_key}/event_config/{side}/{config_key}/details', {
      params: { path: { app_id: appId, event_key: eventKey, side, config_key: configKey }, query },
    }),
  );
}

export async function fetchFields(
  appId: number,
  eventKey: string,
  side: Side,
  configKey: string,
  opts: { accountId: number | null; selectedValue: string; chosen: Record<string, string> },
) {
  const query = {
    ...opts.chosen,
    selectedValue: opts.selectedValue,
    ...(opts.accountId ? { app_account_id: opts.accountId } : {}),
  } as { app_account_id?: number; selectedValue?: string };
  return data(
    await fetchClient.GET('/api/v1/apps/{app_id}/app_events/{event_key}/event_config/{side}/{config_key}/fetch-fields', {
      params: { path: { app_id: appId, event_key: eventKey, side, config_key: configKey }, query },
    }),
  );
}

export async function authorizedAccounts(appId: number) {
  return data(await fetchClient.GET('/api/v1/apps/{app_id}/authorized_app_accounts', { params: { path: { app_id: appId } } }));
}

export interface TestBody {
  node_id: string;
  konnect_id: number | null;
  konnect_activity_id?: number | null;
  canvas_json: CanvasJson;
  app_id?: number;
  app_event_id?: string | null;
  app_account_id?: number | null;
  left_app_id?: number;
  left_app_event_id?: string | null;
  left_config?: Record<string, unknown>;
  config?: Record<string, unknown>;
  provider?: string;
  delay_config?: Record<string, unknown> | null;
  /** The trigger test drawer's choice: the sample must have a value for every (AND) or one (OR) label. */
  trigger_filter?: TriggerFilter;
}

export type TriggerFilter = components['schemas']['TriggerFilterIn'] & { join: 'AND' | 'OR'; labels: string[] };

export async function testAndReview(body: TestBody): Promise<TestOut> {
  return data(await fetchClient.POST('/api/v1/konnects/test_and_review', { body }));
}

export async function captureWebhook(konnectId: number): Promise<CaptureOut> {
  return data(
    await fetchClient.POST('/api/v1/konnect_webhooks/capture_webhook_response/{webhookId}', {
      params: { path: { webhookId: konnectId } },
    }),
  );
}

export async function deleteActivity(body: {
  konnect_id: number;
  konnect_activity_id: number | null;
  nodeId: string;
  canvas_json: CanvasJson;
}) {
  return data(await fetchClient.POST('/api/v1//konnects/delete_activity', { body }));
}

export async function deleteDraft(konnectId: number) {
  return data(
    await fetchClient.POST('/api/v1/konnects/{konnect_id}/update_status', {
      params: { path: { konnect_id: konnectId } },
      body: { status: 'DELETED' },
    }),
  );
}
