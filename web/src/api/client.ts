/**
 * A small typed fetch client for the Konnectz api (same origin, `/api/v1/...`).
 *
 * Every request carries `Authorization: Bearer <token>` from the session cookie.
 * A 401 on an authenticated call clears the session and hands over to the
 * unauthorized handler (the app navigates to /login). Non-2xx replies reject with
 * an `ApiError` carrying the server's JSON body, whose `message` is shown to users.
 */
import { clearSession, sessionToken } from '../lib/session';
import type { ApiErrorBody } from './types';

export class ApiError extends Error {
  readonly status: number;
  readonly body: ApiErrorBody;

  constructor(status: number, body: ApiErrorBody) {
    super(typeof body.message === 'string' && body.message ? body.message : `Request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

type UnauthorizedHandler = () => void;

let onUnauthorized: UnauthorizedHandler = () => {
  window.location.assign('/login');
};

/** Hands over to the installed unauthorized handler (used by the typed client too). */
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

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Public calls (login, signup...) must not treat 401 as an expired session. */
  anonymous?: boolean;
  signal?: AbortSignal;
}

export function buildUrl(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function parseBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = sessionToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(buildUrl(path, opts.query), { method, headers, body, signal: opts.signal });
  const data = await parseBody(res);
  if (!res.ok) {
    if (res.status === 401 && !opts.anonymous) {
      clearSession();
      onUnauthorized();
    }
    const errBody: ApiErrorBody = data && typeof data === 'object' ? (data as ApiErrorBody) : {};
    throw new ApiError(res.status, errBody);
  }
  return data as T;
}

export const api = {
  get: <T>(path: string, opts?: Omit<RequestOptions, 'body'>) => request<T>('GET', path, opts),
  post: <T>(path: string, body?: unknown, opts?: Omit<RequestOptions, 'body'>) =>
    request<T>('POST', path, { ...opts, body }),
};

/** The text to show for a failed call: the server's message, else a fallback. */
export function errorMessage(err: unknown, fallback: string): string {
  if (err instanceof ApiError && typeof err.body.message === 'string' && err.body.message) return err.body.message;
  return fallback;
}
