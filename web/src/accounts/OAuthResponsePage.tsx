/**
 * /oauth/response/:appId/:token and /oauth/response: the popup's wait screen.
 *
 * 1. Opened at /oauth/response/{appId}/{token}: remembers the app id in this window's
 *    sessionStorage, drops the token from the address bar and history, asks the api for the
 *    provider's consent URL (POST /api/v1/auth-url, redirect_url = this host's /oauth/response)
 *    and goes there.
 * 2. The provider redirects back to /oauth/response?code=...&state=... (or ?error=...): the page
 *    posts the reply to /api/v1/authorization, which checks the signed single-use state, swaps the
 *    code (PKCE) and saves the account; then the window closes itself and the opener, which polls
 *    it every 2 s, reloads its account list.
 * A failure stays on screen with a Close button. The page needs no session of its own (a signed-out
 * window shows it too): a 401 never sends this window to /login, it says what to do instead.
 */
import { Button, Result, Spin } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useLocation, useParams } from 'react-router';
import { ApiError, fetchClient, setUnauthorizedHandler } from '../api/typed';
import { sessionToken } from '../lib/session';
import { OAUTH_PENDING_KEY, OAUTH_RESPONSE_PATH } from './constants';
import { addFailureText } from './TokenFieldsForm';

/** How long the success text stays before the window closes. */
export const CLOSE_AFTER_MS = 800;

/** Navigation and closing of the popup (a seam: jsdom cannot navigate or close windows). */
export const popupWindow = {
  assign: (url: string) => window.location.assign(url),
  close: () => window.close(),
  /** Drop the token (or the code) from the address bar and history without a router navigation. */
  forget: () => window.history.replaceState(window.history.state, '', OAUTH_RESPONSE_PATH),
};

interface Pending {
  appId: number;
  token: string;
}

function readPending(): Pending | null {
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(OAUTH_PENDING_KEY) ?? 'null');
    if (value && typeof value === 'object') {
      const { appId, token } = value as Partial<Pending>;
      if (typeof appId === 'number' && Number.isSafeInteger(appId) && appId > 0)
        return { appId, token: typeof token === 'string' ? token : '' };
    }
  } catch {
    // fall through
  }
  return null;
}

/** What a 401 (no session in this window, an expired or wrong token) shows. */
export const SIGNED_OUT_TEXT =
  'This window is not signed in to Konnectz (or its sign-in expired). Sign in in the Konnectz window, then start again from New Account.';

function failureText(err: unknown): string {
  return err instanceof ApiError && err.status === 401 ? SIGNED_OUT_TEXT : addFailureText(err);
}

/** Requests from the popup carry the session's token; the URL's token stands in when there is no session cookie. */
function authHeaders(token: string): Record<string, string> {
  return !sessionToken() && token ? { Authorization: `Bearer ${token}` } : {};
}

type State = { phase: 'working'; text: string } | { phase: 'done'; text: string } | { phase: 'failed'; text: string };

export function OAuthResponsePage() {
  const params = useParams<{ appId?: string; token?: string }>();
  const { search } = useLocation();
  const [state, setState] = useState<State>({ phase: 'working', text: 'Please wait while we connect your account...' });
  const started = useRef(false);

  // The popup's wait screen stays up without a session: no hand-over to /login on a 401 here.
  useEffect(() => setUnauthorizedHandler(() => undefined), []);

  useEffect(() => {
    if (started.current) return; // StrictMode runs effects twice; the OAuth state is single-use
    started.current = true;
    const redirectUrl = `${window.location.origin}${OAUTH_RESPONSE_PATH}`;
    const fail = (text: string) => setState({ phase: 'failed', text });

    const begin = async (appId: number, token: string) => {
      sessionStorage.setItem(OAUTH_PENDING_KEY, JSON.stringify({ appId, token }));
      popupWindow.forget();
      const { data, error } = await fetchClient
        .POST('/api/v1/auth-url', { body: { app_id: appId, redirect_url: redirectUrl }, headers: authHeaders(token) })
        .catch((err: unknown) => ({ data: undefined, error: err }));
      if (error || !data) return fail(failureText(error));
      if (data.type !== 'oauth' || !data.auth_url) return fail('This app is connected with its token fields, not here.');
      popupWindow.assign(data.auth_url);
    };

    const complete = async (query: URLSearchParams) => {
      const pending = readPending();
      if (!pending) return fail('No authorisation is waiting in this window. Please start again from New Account.');
      const auth_response = Object.fromEntries(query.entries());
      const { data, error } = await fetchClient
        .POST('/api/v1/authorization', {
          body: { app_id: pending.appId, redirect_url: redirectUrl, auth_response },
          headers: authHeaders(pending.token),
        })
        .catch((err: unknown) => ({ data: undefined, error: err }));
      sessionStorage.removeItem(OAUTH_PENDING_KEY);
      popupWindow.forget();
      if (error || !data) return fail(failureText(error));
      setState({ phase: 'done', text: data.status });
      setTimeout(() => popupWindow.close(), CLOSE_AFTER_MS);
    };

    const appId = Number(params.appId);
    if (params.appId !== undefined) {
      if (!Number.isSafeInteger(appId) || appId < 1) return fail('Unknown app.');
      void begin(appId, params.token ?? '');
      return;
    }
    const query = new URLSearchParams(search);
    if (!query.has('code') && !query.has('error')) return fail('The provider sent no authorisation back.');
    void complete(query);
  }, [params.appId, params.token, search]);

  return (
    <div
      className="kz-oauth-response"
      data-testid="oauth-response"
      style={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center' }}
    >
      {state.phase === 'working' ? (
        <Result icon={<Spin size="large" />} title={state.text} />
      ) : state.phase === 'done' ? (
        <Result status="success" title={state.text} subTitle="This window closes itself." />
      ) : (
        <Result
          status="error"
          title="The account could not be connected"
          subTitle={state.text}
          extra={<Button onClick={() => popupWindow.close()}>Close</Button>}
        />
      )}
    </div>
  );
}
