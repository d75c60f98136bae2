/**
 * Request and reply shapes of the Konnectz api as used by the SPA.
 *
 * These are written by hand from the product spec until `npm run gen:types`
 * produces `schema.d.ts` from the api's OpenAPI document; the names here are the
 * ones the rest of the app imports, so swapping them for generated types only
 * touches this file.
 */
import type { CanvasJson } from '../editor/model/types';

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

export interface LoginResponse {
  auth_token: string;
  preferred_language?: string | null;
  message?: string;
}

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

export interface App {
  id: number;
  name: string;
  image_url: string | null;
  status: string | null;
  account_count: number;
  provider: string;
  app_type: string;
  auth_type: string | null;
}

export interface AppsResponse {
  apps: App[];
}

// ---- konnects (flows) -------------------------------------------------------

export type KonnectStatus = 'Draft' | 'Published' | 'DELETED' | string;

export interface KonnectListItem {
  id: number;
  konnect_name: string | null;
  status: KonnectStatus;
  created_at: string;
  success_task_count?: number;
  error_task_count?: number;
  left_app?: { name: string; image_url?: string | null } | null;
  right_apps?: { app_name: string; image_url?: string | null }[];
  webhook_url?: string | null;
}

export interface KonnectListQuery {
  page_size: number;
  page_index: number;
  search_query?: string;
}

export interface KonnectListResponse {
  konnects: KonnectListItem[];
  total_konnects: number;
}

export interface SaveKonnectRequest {
  konnect_id: number | null;
  canvas_name: boolean;
  canvas_json: CanvasJson;
  publish: boolean;
}

export interface SaveKonnectResponse {
  status: 'SUCCESS' | string;
  message: string;
  konnect_id: number;
  webhook_url?: string | null;
}

export interface EditKonnectResponse {
  konnect_id: number;
  konnect_name: string | null;
  status: KonnectStatus;
  canvas_json: Partial<CanvasJson> | null;
  webhook_url?: string | null;
}

// ---- task logs --------------------------------------------------------------

export type TaskLogType = 'SUCCESS' | 'ERROR';

export interface TaskLog {
  id: number;
  task_date: string;
  status: string;
  konnect_id: number;
  data: Record<string, unknown>;
}

export interface TaskLogsResponse {
  task_logs: TaskLog[];
  total: number;
}

export interface Task {
  id: number;
  task_date: string;
  step_id: string;
  app_name: string;
  status: string;
  data: Record<string, unknown>;
}

export interface TasksResponse {
  tasks: Task[];
}
