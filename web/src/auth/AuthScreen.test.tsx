import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
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

  it('ends the session on /logout and shows the sign-in form', async () => {
    signedIn();
    const { router } = renderRoutes(routes, '/logout');
    expect(await screen.findByTestId('login-submit')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/logout');
    expect(readSession()).toBeNull();
    expect(useSession.getState().session).toBeNull();
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
