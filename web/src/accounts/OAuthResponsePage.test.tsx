import { screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient, setUnauthorizedHandler } from '../api/typed';
import { writeSession } from '../lib/session';
import { mockFetch, renderRoutes } from '../test/utils';
import { OAUTH_PENDING_KEY } from './constants';
import { routes as appRoutes } from '../App';
import { clearSession } from '../lib/session';
import { useSession } from '../lib/sessionStore';
import { OAuthResponsePage, popupWindow, SIGNED_OUT_TEXT } from './OAuthResponsePage';

const routes = [
  { path: '/oauth/response', element: <OAuthResponsePage /> },
  { path: '/oauth/response/:appId/:token', element: <OAuthResponsePage /> },
];

describe('OAuthResponsePage', () => {
  beforeEach(() => {
    queryClient.clear();
    sessionStorage.clear();
  });

  it('opened at /oauth/response/{appId}/{token}: remembers the app, forgets the token, goes to the consent page', async () => {
    writeSession({ token: 'tok', keepMeLoggedIn: false, lang: 'en', appId: null });
    const calls = mockFetch((c) =>
      c.url === '/api/v1/auth-url' ? { body: { type: 'oauth', auth_url: 'http://provider.test/authorize?state=s' } } : undefined,
    );
    const assign = vi.spyOn(popupWindow, 'assign').mockImplementation(() => {});
    const forget = vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
    renderRoutes(routes, '/oauth/response/12/tok');
    expect(screen.getByText('Please wait while we connect your account...')).toBeInTheDocument();
    await waitFor(() => expect(assign).toHaveBeenCalledWith('http://provider.test/authorize?state=s'));
    expect(forget).toHaveBeenCalled();
    expect(JSON.parse(sessionStorage.getItem(OAUTH_PENDING_KEY) ?? '{}')).toEqual({ appId: 12, token: 'tok' });
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toEqual({ app_id: 12, redirect_url: `${window.location.origin}/oauth/response` });
    expect(calls[0].headers.authorization).toBe('Bearer tok');
  });

  it('uses the token of the address when the window has no session cookie', async () => {
    const calls = mockFetch((c) =>
      c.url === '/api/v1/auth-url' ? { body: { type: 'oauth', auth_url: 'http://provider.test/a' } } : undefined,
    );
    vi.spyOn(popupWindow, 'assign').mockImplementation(() => {});
    vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
    renderRoutes(routes, '/oauth/response/12/url-token');
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0].headers.authorization).toBe('Bearer url-token');
  });

  it('back from the provider: completes the authorisation once and closes itself', async () => {
    writeSession({ token: 'tok', keepMeLoggedIn: false, lang: 'en', appId: null });
    sessionStorage.setItem(OAUTH_PENDING_KEY, JSON.stringify({ appId: 12, token: 'tok' }));
    const calls = mockFetch((c) =>
      c.url === '/api/v1/authorization'
        ? { body: { status: 'Account added successfully', app_user_id: 5, name: 'Slack #1' } }
        : undefined,
    );
    vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
    const close = vi.spyOn(popupWindow, 'close').mockImplementation(() => {});
    renderRoutes(routes, '/oauth/response?code=abc&state=signed');
    expect(await screen.findByText('Account added successfully')).toBeInTheDocument();
    await waitFor(() => expect(close).toHaveBeenCalled());
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toEqual({
      app_id: 12,
      redirect_url: `${window.location.origin}/oauth/response`,
      auth_response: { code: 'abc', state: 'signed' },
    });
    expect(sessionStorage.getItem(OAUTH_PENDING_KEY)).toBeNull();
  });

  it('shows the server text and stays open when the authorisation fails', async () => {
    writeSession({ token: 'tok', keepMeLoggedIn: false, lang: 'en', appId: null });
    sessionStorage.setItem(OAUTH_PENDING_KEY, JSON.stringify({ appId: 12, token: 'tok' }));
    mockFetch((c) =>
      c.url === '/api/v1/authorization'
        ? { status: 400, body: { message: 'The authorisation expired or was already used. Please try again.' } }
        : undefined,
    );
    vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
    const close = vi.spyOn(popupWindow, 'close').mockImplementation(() => {});
    renderRoutes(routes, '/oauth/response?code=abc&state=old');
    expect(await screen.findByText('The authorisation expired or was already used. Please try again.')).toBeInTheDocument();
    expect(close).not.toHaveBeenCalled();
    screen.getByRole('button', { name: 'Close' }).click();
    expect(close).toHaveBeenCalled();
  });

  it('without a pending authorisation or a code it says so and calls nothing', async () => {
    const calls = mockFetch(() => undefined);
    renderRoutes(routes, '/oauth/response?code=abc&state=s');
    expect(await screen.findByText(/No authorisation is waiting in this window/)).toBeInTheDocument();
    renderRoutes(routes, '/oauth/response');
    expect(await screen.findByText('The provider sent no authorisation back.')).toBeInTheDocument();
    renderRoutes(routes, '/oauth/response/99999999999999999999/x');
    expect(await screen.findByText('Unknown app.')).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });

  it("a signed-out window: the app's route shows the wait screen and starts, without a session", async () => {
    clearSession();
    useSession.setState({ session: null });
    const calls = mockFetch((c) =>
      c.url === '/api/v1/auth-url' ? { body: { type: 'oauth', auth_url: 'http://provider.test/a' } } : undefined,
    );
    const assign = vi.spyOn(popupWindow, 'assign').mockImplementation(() => {});
    vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
    const { router } = renderRoutes(appRoutes, '/oauth/response/12/url-token');
    expect(await screen.findByText('Please wait while we connect your account...')).toBeInTheDocument();
    await waitFor(() => expect(assign).toHaveBeenCalledWith('http://provider.test/a'));
    expect(router.state.location.pathname).toBe('/oauth/response/12/url-token');
    expect(calls[0].headers.authorization).toBe('Bearer url-token');
  });

  it('a signed-out window with a token the api refuses (401) stays here and says what to do, no /login', async () => {
    clearSession();
    useSession.setState({ session: null });
    const toLogin = vi.fn();
    const restore = setUnauthorizedHandler(toLogin); // what the app does by default: go to /login
    try {
      mockFetch((c) => (c.url === '/api/v1/auth-url' ? { status: 401, body: { message: 'Not authenticated' } } : undefined));
      vi.spyOn(popupWindow, 'forget').mockImplementation(() => {});
      const { router } = renderRoutes(appRoutes, '/oauth/response/12/expired');
      expect(await screen.findByText(SIGNED_OUT_TEXT)).toBeInTheDocument();
      expect(toLogin).not.toHaveBeenCalled();
      expect(router.state.location.pathname).toBe('/oauth/response/12/expired');
    } finally {
      restore();
    }
  });
});
