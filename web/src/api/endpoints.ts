/** One typed function per api call the SPA makes. */
import { api } from './client';
import type {
  AppsResponse,
  EditKonnectResponse,
  EmailConfirmationResponse,
  KonnectListQuery,
  KonnectListResponse,
  LoginRequest,
  LoginResponse,
  Profile,
  ResetPasswordEmailResponse,
  SaveKonnectRequest,
  SaveKonnectResponse,
  SignupRequest,
  SignupResponse,
  TaskLogsResponse,
  TaskLogType,
  TasksResponse,
  TestAndReviewRequest,
  TestAndReviewResponse,
  UpdateUserPasswordRequest,
  UpdateUserPasswordResponse,
  UserExistsResponse,
} from './types';

const V1 = '/api/v1';

export const authApi = {
  login: (body: LoginRequest) => api.post<LoginResponse>(`${V1}/auth/login`, body, { anonymous: true }),
  userExists: (email: string) =>
    api.post<UserExistsResponse>(`${V1}/users/user_exists`, { email }, { anonymous: true }),
  signup: (body: SignupRequest) => api.post<SignupResponse>(`${V1}/signup`, body, { anonymous: true }),
  confirmEmail: (confirmation_token: string) =>
    api.post<EmailConfirmationResponse>(`${V1}/users/email_confirmation`, { confirmation_token }, { anonymous: true }),
  resetPasswordEmail: (email: string) =>
    api.post<ResetPasswordEmailResponse>(`${V1}/users/reset_password_email`, { email }, { anonymous: true }),
  updatePassword: (body: UpdateUserPasswordRequest) =>
    api.post<UpdateUserPasswordResponse>(`${V1}/users/update_user_password`, body, { anonymous: true }),
};

export const userApi = {
  profile: () => api.get<Profile>(`${V1}/users/profile`),
};

export const appsApi = {
  triggers: () => api.get<AppsResponse>(`${V1}/apps/get_triggers`),
  actions: () => api.get<AppsResponse>(`${V1}/apps/get_actions`),
  addOns: () => api.get<AppsResponse>(`${V1}/apps/add_on_apps`),
};

export const konnectsApi = {
  list: (query: KonnectListQuery) =>
    api.get<KonnectListResponse>(`${V1}/konnects`, { query: { ...query } }),
  edit: (id: string | number) => api.get<EditKonnectResponse>(`${V1}/konnects/${encodeURIComponent(String(id))}/edit`),
  save: (body: SaveKonnectRequest) => api.post<SaveKonnectResponse>(`${V1}/konnects/save_konnect`, body),
  publish: (body: SaveKonnectRequest) => api.post<SaveKonnectResponse>(`${V1}/konnects/publish_konnect`, body),
  testAndReview: (body: TestAndReviewRequest) =>
    api.post<TestAndReviewResponse>(`${V1}/konnects/test_and_review`, body),
};

export const TASK_LOG_PAGE_SIZE = 60;

export const taskLogsApi = {
  logs: (konnectId: number, type: TaskLogType) =>
    api.get<TaskLogsResponse>(`${V1}/task_logs/logs`, {
      query: { konnect_id: konnectId, task_log_type: type, page_index: 1, page_size: TASK_LOG_PAGE_SIZE },
    }),
  tasks: (taskLogId: number) => api.get<TasksResponse>(`${V1}/task_logs/${taskLogId}/tasks`),
};
