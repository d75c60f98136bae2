import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { readSession, writeSession } from '../lib/session';
import { useSession } from '../lib/sessionStore';
import { RequireSession } from '../shell/RequireSession';
import { renderRoutes } from '../test/utils';
import { AuthScreen } from './AuthScreen';

const session = { token: 'jwt', keepMeLoggedIn: true, lang: 'en', appId: null };

const routes = [
  { path: '/login', element: <AuthScreen /> },
  { path: '/logout', element: <AuthScreen /> },
  { path: '/forgot-password', element: <AuthScreen /> },
  {
    path: '/dashboard',
    element: (
      <RequireSession>
        <div data-testid="dashboard" />
      </RequireSession>
    ),
  },
];

function signedIn() {
  writeSession(session);
  useSession.setState({ session });
}

describe('AuthScreen routes', () => {
  it('sends an existing session from /login to /dashboard', async () => {
    signedIn();
    const { router } = renderRoutes(routes, '/login');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(screen.getByTestId('dashboard')).toBeInTheDocument();
  });

  it('ends the session on /logout (revoking its token at the api) and shows the sign-in form', async () => {
    signedIn();
    const token = readSession()?.token;
    const revoked: string[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL) => {
      const req = input as Request;
      revoked.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get('Authorization')}`);
      return new Response(JSON.stringify({ message: 'Signed out' }), { headers: { 'Content-Type': 'application/json' } });
    });
    const { router } = renderRoutes(routes, '/logout');
    expect(await screen.findByTestId('login-submit')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/logout');
    await waitFor(() => expect(readSession()).toBeNull());
    expect(useSession.getState().session).toBeNull();
    expect(revoked).toEqual([`POST /api/v1/users/logout Bearer ${token}`]);
  });

  it('sends signed-in routes to /login without a session', async () => {
    useSession.setState({ session: null });
    const { router } = renderRoutes(routes, '/dashboard');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });

  it('labels the second tab by route', () => {
    useSession.setState({ session: null });
    renderRoutes(routes, '/forgot-password');
    expect(screen.getByText('FORGOT PASSWORD')).toBeInTheDocument();
    expect(screen.getByTestId('forgot-email')).toBeInTheDocument();
  });
});
