/**
 * The one web client of the Konnectz api: openapi-fetch over the generated `paths`
 * (src/api/schema.d.ts) and TanStack Query hooks over it (openapi-react-query). A call to a route
 * that does not exist, or with a wrong path parameter, query or body, fails `tsc`.
 *
 *   const { data, isPending, isError } = $api.useQuery('get', '/api/v1/folders/list');
 *   const move = $api.useMutation('post', '/api/v1/folders/{folder_id}/assign');
 *   const reply = await call(fetchClient.POST('/api/v1/auth/login', { body }));
 *
 * Its middleware, in order (see `middleware` below):
 *  1. session  – every request carries `Authorization: Bearer <token>` from the session cookie and
 *                `Accept: application/json`.
 *  2. errors   – a non-2xx reply rejects with `ApiError` carrying the server's body (`{message}`,
 *                `{key, message}`, FastAPI's `{detail}`; a non-JSON body becomes `{message: text}`);
 *                `errorMessage(err, fallback)` picks the text to show.
 *                A 401 on a call made with a session clears it and hands over to the unauthorized
 *                handler (the app navigates to /login) — except on the public routes in
 *                `PUBLIC_ROUTES` (sign-in, sign-up, password reset...), where 401 means a wrong
 *                password or token, not an expired session.
 * FormData bodies (the avatar upload) are sent as is, with the browser's multipart boundary.
 * This is the only module that may call `fetch` on `/api/` paths (eslint enforces it).
 */
import { QueryClient } from '@tanstack/react-query';
import createFetchClient, { type Middleware } from 'openapi-fetch';
import createQueryHooks from 'openapi-react-query';
import { clearSession, sessionToken } from '../lib/session';
import type { components, paths } from './schema';

/** Error body of a 4xx/5xx reply: the api's ErrorReply / KeyReply, or FastAPI's `{detail}`. */
export type ApiErrorBody = Partial<components['schemas']['ErrorReply'] & components['schemas']['KeyReply']> & {
  detail?: components['schemas']['HTTPValidationError']['detail'] | string;
  [extra: string]: unknown;
};

/** The text of an error body: its `message`, else a string `detail`, else ''. */
function bodyMessage(body: ApiErrorBody): string {
  if (typeof body.message === 'string' && body.message) return body.message;
  if (typeof body.detail === 'string' && body.detail) return body.detail;
  return '';
}

export class ApiError extends Error {
  readonly status: number;
  readonly body: ApiErrorBody;

  constructor(status: number, body: ApiErrorBody) {
    super(bodyMessage(body) || `Request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

/** The text to show for a failed call: the server's message, else a fallback. */
export function errorMessage(err: unknown, fallback: string): string {
  if (err instanceof ApiError) return bodyMessage(err.body) || fallback;
  return fallback;
}

type UnauthorizedHandler = () => void;

let onUnauthorized: UnauthorizedHandler = () => {
  window.location.assign('/login');
};

/** Hands over to the installed unauthorized handler. */
export function notifyUnauthorized(): void {
  onUnauthorized();
}

/** The app shell installs a handler that navigates with the router. */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): () => void {
  const previous = onUnauthorized;
  onUnauthorized = handler;
  return () => {
    onUnauthorized = previous;
  };
}

/** Public calls: a 401 there is a wrong password / token, not an expired session. */
export const PUBLIC_ROUTES: ReadonlySet<keyof paths> = new Set<keyof paths>([
  '/api/v1/auth/login',
  '/api/v1/users/user_exists',
  '/api/v1/signup',
  '/api/v1/users/email_confirmation',
  '/api/v1/users/reset_password_email',
  '/api/v1/users/update_user_password',
]);

async function errorBody(response: Response): Promise<ApiErrorBody> {
  const text = await response.clone().text();
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    return parsed && typeof parsed === 'object' ? (parsed as ApiErrorBody) : {};
  } catch {
    return { message: text };
  }
}

/** 1. The session's bearer token and the JSON Accept header on every request. */
export const sessionMiddleware: Middleware = {
  onRequest({ request }) {
    const token = sessionToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    request.headers.set('Accept', 'application/json');
    return request;
  },
};

/** 2. Non-2xx replies reject with ApiError; a 401 on a signed-in, non-public call ends the session. */
export const errorMiddleware: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    if (response.ok) return response;
    const body = await errorBody(response);
    const isPublic = PUBLIC_ROUTES.has(schemaPath as keyof paths);
    if (response.status === 401 && !isPublic && request.headers.has('Authorization')) {
      clearSession();
      notifyUnauthorized();
    }
    throw new ApiError(response.status, body);
  },
};

export const middleware: readonly Middleware[] = [sessionMiddleware, errorMiddleware];

// fetch is looked up per call (not captured at start), so tests can replace globalThis.fetch.
// An absolute base (the page's origin): a Request with a relative URL cannot be built outside a browser (tests).
export const fetchClient = createFetchClient<paths>({
  baseUrl: globalThis.location?.origin ?? '',
  fetch: (request) => globalThis.fetch(request),
});
fetchClient.use(...middleware);

/**
 * The reply body of a call (`await call(fetchClient.GET(...))`). Failures already threw ApiError in
 * the middleware; an empty 2xx reply (no JSON) gives `{}` as the plain client did.
 */
export async function call<T>(pending: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const res = await pending;
  if (res.error !== undefined) throw res.error;
  return (res.data ?? {}) as T;
}

/** TanStack Query hooks typed by the OpenAPI document. */
export const $api = createQueryHooks(fetchClient);

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
      mutations: { retry: false },
    },
  });
}

export const queryClient = createQueryClient();
