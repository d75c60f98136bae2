/**
 * Request and reply shapes of the Konnectz api as used by the SPA.
 *
 * Replies come from `schema.d.ts`, generated from the api's OpenAPI document by
 * `make gen-types` (`make test` fails when it is stale). Requests that carry the
 * editor document keep the editor's own `CanvasJson` type.
 */
import type { CanvasJson } from '../editor/model/types';
import type { components } from './schema';

/** Error body of every 4xx/5xx reply. */
export interface ApiErrorBody {
  message?: string;
  key?: string;
  [extra: string]: unknown;
}

// ---- auth and users -------------------------------------------------------

export interface LoginRequest {
  email: string;
  password: string;
  rememberMe: boolean;
  /** The ALTCHA payload string produced by the widget once verified. */
  captcha: string;
}

export type LoginResponse = components['schemas']['LoginOut'];

export interface UserExistsRequest {
  email: string;
}

export interface KeyedResponse<K extends string = string> {
  key: K;
  message?: string;
}

export type UserExistsResponse = KeyedResponse<'NO_USER' | 'USER_EXISTS'>;

export interface SignupRequest {
  email: string;
  first_name: string;
  last_name: string;
  password: string;
  password_confirmation: string;
  is_admin: false;
}

export type SignupResponse = KeyedResponse<'SIGNUP_SUCCESS' | string>;

export interface EmailConfirmationRequest {
  confirmation_token: string;
}

export type EmailConfirmationResponse = KeyedResponse<'VERIFY_EMAIL_SUCCESS' | string>;

export interface ResetPasswordEmailRequest {
  email: string;
}

export type ResetPasswordEmailResponse = KeyedResponse<'SENT_RESET_INSTRUCTIONS_FAIL' | string>;

export interface UpdateUserPasswordRequest {
  reset_password_token: string;
  password: string;
  password_confirmation: string;
}

export type UpdateUserPasswordResponse = KeyedResponse<'PASSWORD_UPDATED' | 'PASSWORD_NOT_UPDATED' | string>;

export interface Profile {
  id?: number;
  first_name?: string | null;
  last_name?: string | null;
  email: string;
  image_url?: string | null;
  current_plan?: string | null;
  country?: string | null;
  timezone?: string | null;
  preferred_language?: string | null;
  is_admin?: boolean;
  [extra: string]: unknown;
}

// ---- apps -------------------------------------------------------------------

export type App = components['schemas']['AppOut'];

export type AppsResponse = components['schemas']['AppList'];

// ---- konnects (flows) -------------------------------------------------------

export type KonnectStatus = 'Draft' | 'Published' | 'DELETED' | string;

export type KonnectListItem = components['schemas']['KonnectItem'];

export interface KonnectListQuery {
  page_size: number;
  page_index: number;
  search_query?: string;
}

export type KonnectListResponse = components['schemas']['KonnectList'];

export interface SaveKonnectRequest {
  konnect_id: number | null;
  canvas_name: boolean;
  canvas_json: CanvasJson;
  publish: boolean;
}

export type SaveKonnectResponse = components['schemas']['SaveKonnectOut'];

/** Test & Review of one node (the editor's calls: canvas spec §7). */
export interface TestAndReviewRequest {
  node_id: string | null;
  konnect_id: number | null;
  canvas_json: CanvasJson;
}

export type TestAndReviewResponse = components['schemas']['TestAndReviewOut'];

export interface EditKonnectResponse {
  konnect_id: number;
  konnect_name: string | null;
  status: KonnectStatus;
  canvas_json: Partial<CanvasJson> | null;
  webhook_url?: string | null;
  /** A live flow whose saved changes wait beside the live version (KonnectEdit.draft_pending). */
  draft_pending?: components['schemas']['KonnectEdit']['draft_pending'];
}

// ---- task logs --------------------------------------------------------------

/** A task log's status (the api's enum): the values a task_log_type or history status filter takes. */
export type TaskLogType = components['schemas']['TaskLogOut']['status'];

export type TaskLog = components['schemas']['TaskLogOut'];

export type TaskLogsResponse = components['schemas']['TaskLogList'];

export type Task = components['schemas']['TaskOut'];

export type TasksResponse = components['schemas']['TaskList'];
