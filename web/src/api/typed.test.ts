import { afterEach, describe, expect, it, vi } from 'vitest';
import { readSession, writeSession } from '../lib/session';
import { mockFetch } from '../test/utils';
import { ApiError, call, errorMessage, fetchClient, setUnauthorizedHandler } from './typed';

const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };

let restore: (() => void) | undefined;
afterEach(() => restore?.());

function onUnauthorized() {
  const handler = vi.fn();
  restore = setUnauthorizedHandler(handler);
  return handler;
}

describe('the api client (src/api/typed.ts)', () => {
  it('sends the session token and asks for JSON', async () => {
    writeSession(session);
    const calls = mockFetch(() => ({ body: { email: 'a@b.c' } }));
    const profile = await call(fetchClient.GET('/api/v1/users/profile'));
    expect(profile).toEqual({ email: 'a@b.c' });
    expect(calls[0].headers.Authorization).toBe('Bearer jwt');
    expect(calls[0].headers.Accept).toBe('application/json');
  });

  it('sends JSON bodies and typed queries', async () => {
    const calls = mockFetch(() => ({ body: { task_logs: [] } }));
    await call(
      fetchClient.GET('/api/v1/task_logs/logs', { params: { query: { konnect_id: 3, task_log_type: 'SUCCESS', page_index: 1, page_size: 60 } } }),
    );
    await call(fetchClient.POST('/api/v1/users/user_exists', { body: { email: 'a@b.c' } }));
    expect(calls[0].url).toBe('/api/v1/task_logs/logs?konnect_id=3&task_log_type=SUCCESS&page_index=1&page_size=60');
    expect(calls[0].headers.Authorization).toBeUndefined();
    expect(calls[1]).toMatchObject({ method: 'POST', body: { email: 'a@b.c' } });
    expect(calls[1].headers['Content-Type']).toBe('application/json');
  });

  it("rejects a failed call with ApiError carrying the server's message", async () => {
    mockFetch(() => ({ status: 400, body: { key: 'WRONG_PASSWORD', message: 'Your current password is not correct.' } }));
    const err = await call(fetchClient.GET('/api/v1/users/profile')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).body.key).toBe('WRONG_PASSWORD');
    expect(errorMessage(err, 'fallback')).toBe('Your current password is not correct.');
  });

  it("reads FastAPI's {detail} text, a non-JSON body, and falls back otherwise", async () => {
    mockFetch(() => ({ status: 404, body: { detail: 'Not Found' } }));
    expect(errorMessage(await call(fetchClient.GET('/api/v1/users/profile')).catch((e: unknown) => e), 'x')).toBe('Not Found');

    mockFetch(() => ({ status: 422, body: { detail: [{ loc: ['body'], msg: 'bad', type: 'value_error' }] } }));
    expect(errorMessage(await call(fetchClient.GET('/api/v1/users/profile')).catch((e: unknown) => e), 'x')).toBe('x');

    vi.spyOn(globalThis, 'fetch').mockResolvedValue(new Response('Bad Gateway', { status: 502 }));
    const err = await call(fetchClient.GET('/api/v1/users/profile')).catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(502);
    expect(errorMessage(err, 'x')).toBe('Bad Gateway');

    expect(errorMessage(new Error('offline'), 'Something went wrong!')).toBe('Something went wrong!');
  });

  it('ends the session on a 401 of a signed-in call', async () => {
    writeSession(session);
    const handler = onUnauthorized();
    mockFetch(() => ({ status: 401, body: { message: 'expired' } }));
    await expect(call(fetchClient.GET('/api/v1/users/profile'))).rejects.toBeInstanceOf(ApiError);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(readSession()).toBeNull();
  });

  it('keeps the session on a 401 of a public call (a wrong password) or of a call without a session', async () => {
    writeSession(session);
    const handler = onUnauthorized();
    mockFetch(() => ({ status: 401, body: { message: 'Invalid email or password' } }));
    const body = { email: 'a@b.c', password: 'nope', rememberMe: false, captcha: 'x' };
    const err = await call(fetchClient.POST('/api/v1/auth/login', { body })).catch((e: unknown) => e);
    expect(errorMessage(err, 'x')).toBe('Invalid email or password');
    expect(handler).not.toHaveBeenCalled();
    expect(readSession()?.token).toBe('jwt');
  });

  it('sends FormData as multipart (the avatar upload)', async () => {
    writeSession(session);
    const types: (string | null)[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL) => {
      types.push((input as Request).headers.get('Content-Type'));
      return new Response(JSON.stringify({ key: 'UPDATE_SUCCESS' }), { headers: { 'Content-Type': 'application/json' } });
    });
    const form = new FormData();
    form.append('image', new Blob(['png']), 'a.png');
    await call(fetchClient.POST('/api/v1/users/profile', { body: form as never }));
    expect(types[0]).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('gives {} for an empty 2xx reply', async () => {
    vi.spyOn(globalThis, 'fetch').mockResolvedValue(new Response(null, { status: 204 }));
    expect(await call(fetchClient.POST('/api/v1/users/logout'))).toEqual({});
  });
});
