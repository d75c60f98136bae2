import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { vi } from 'vitest';
import { Providers } from '../theme/Providers';

/** Render `routes` at `path` inside the app's providers; returns the router too. */
export function renderRoutes(routes: RouteObject[], path: string) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const utils = render(
    <Providers>
      <RouterProvider router={router} />
    </Providers>,
  );
  return { router, ...utils };
}

export function renderAt(element: ReactElement, path = '/', routePath = path) {
  return renderRoutes(
    [
      { path: routePath, element },
      { path: '*', element: <div data-testid="elsewhere" /> },
    ],
    path,
  );
}

export interface FetchCall {
  url: string;
  method: string;
  body: unknown;
  headers: Record<string, string>;
}

type Responder = (call: FetchCall) => { status?: number; body: unknown } | undefined;

/** `content-type` → `Content-Type`. */
function headerCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** Replace fetch with `responder`; unknown calls get a 404. Returns the recorded calls. */
export function mockFetch(responder: Responder) {
  const calls: FetchCall[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    let call: FetchCall;
    if (input instanceof Request) {
      // openapi-fetch (the one client) hands fetch a Request with an absolute URL: record its path.
      const url = new URL(input.url);
      const text = await input.clone().text();
      call = {
        url: url.pathname + url.search,
        method: input.method,
        body: text ? JSON.parse(text) : undefined,
        // Headers lower-cases names: record both `authorization` and `Authorization` (as the app writes it).
        headers: Object.fromEntries([...input.headers.entries()].flatMap(([name, value]) => [[name, value], [headerCase(name), value]])),
      };
    } else {
      call = {
        url: String(input),
        method: init?.method ?? 'GET',
        body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
        headers: (init?.headers as Record<string, string>) ?? {},
      };
    }
    calls.push(call);
    const reply = responder(call) ?? { status: 404, body: { message: `no fake for ${call.method} ${call.url}` } };
    return new Response(JSON.stringify(reply.body), {
      status: reply.status ?? 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
  return calls;
}
