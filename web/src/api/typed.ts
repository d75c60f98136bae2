/**
 * The typed data layer: openapi-fetch over the generated `paths` (src/api/schema.d.ts) and
 * TanStack Query hooks over it (openapi-react-query). A call to a route that does not exist,
 * or with a wrong query/body, fails `tsc`.
 *
 *   const { data, isPending, isError } = $api.useQuery('get', '/api/v1/folders/list');
 *   const move = $api.useMutation('post', '/api/v1/folders/{id}/assign');
 *
 * Every request carries the session's bearer token; a 401 on a call made with a session clears
 * it and hands over to the unauthorized handler (the app navigates to /login), exactly as the
 * plain client in ./client.ts does. Non-2xx replies reject with `ApiError` (server body kept), so
 * `errorMessage(err, fallback)` works for both clients.
 */
import { QueryClient } from '@tanstack/react-query';
import createFetchClient, { type Middleware } from 'openapi-fetch';
import createQueryHooks from 'openapi-react-query';
import { clearSession, sessionToken } from '../lib/session';
import { ApiError, notifyUnauthorized } from './client';
import type { paths } from './schema';
import type { ApiErrorBody } from './types';

const auth: Middleware = {
  onRequest({ request }) {
    const token = sessionToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    request.headers.set('Accept', 'application/json');
    return request;
  },
  async onResponse({ request, response }) {
    if (response.ok) return response;
    const text = await response.clone().text();
    let body: ApiErrorBody = {};
    try {
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (parsed && typeof parsed === 'object') body = parsed as ApiErrorBody;
    } catch {
      body = { message: text };
    }
    if (response.status === 401 && request.headers.has('Authorization')) {
      clearSession();
      notifyUnauthorized();
    }
    throw new ApiError(response.status, body);
  },
};

// fetch is looked up per call (not captured at start), so tests can replace globalThis.fetch.
// An absolute base (the page's origin): a Request with a relative URL cannot be built outside a browser (tests).
export const fetchClient = createFetchClient<paths>({
  baseUrl: globalThis.location?.origin ?? '',
  fetch: (request) => globalThis.fetch(request),
});
fetchClient.use(auth);

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
