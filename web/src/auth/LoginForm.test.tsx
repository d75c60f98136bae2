import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { readSession } from '../lib/session';
import { useSession } from '../lib/sessionStore';
import { mockFetch, renderRoutes } from '../test/utils';
import { useTheme } from '../theme/theme';
import { AuthScreen } from './AuthScreen';

function renderLogin() {
  useSession.setState({ session: null });
  return renderRoutes(
    [
      { path: '/login', element: <AuthScreen /> },
      { path: '/dashboard', element: <div data-testid="dashboard" /> },
    ],
    '/login',
  );
}

function solveCaptcha(payload: string) {
  const widget = document.querySelector('altcha-widget');
  expect(widget).not.toBeNull();
  act(() => {
    widget!.dispatchEvent(new CustomEvent('statechange', { detail: { state: 'verified', payload } }));
  });
}

describe('LoginForm', () => {
  it('shows the tabs and the login texts', () => {
    renderLogin();
    expect(screen.getByText('SIGN IN')).toBeInTheDocument();
    expect(screen.getByText('REGISTER NOW')).toBeInTheDocument();
    expect(screen.getByText('Keep me logged in')).toBeInTheDocument();
    expect(screen.getByText('Forgot Password')).toHaveAttribute('href', '/forgot-password');
    expect(document.querySelector('altcha-widget')?.getAttribute('challenge')).toBe('/api/v1/captcha/challenge');
  });

  it('the captcha follows the theme (color-scheme and colours), light and dark', () => {
    useTheme.setState({ mode: 'dark' });
    try {
      renderLogin();
      const widget = document.querySelector<HTMLElement>('altcha-widget')!;
      expect(widget.style.colorScheme).toBe('dark');
      expect(widget.style.getPropertyValue('--altcha-color-base').toLowerCase()).toBe('#102042');
      act(() => useTheme.setState({ mode: 'light' }));
      expect(widget.style.colorScheme).toBe('light');
      expect(widget.style.getPropertyValue('--altcha-color-base').toLowerCase()).toBe('#ffffff');
    } finally {
      useTheme.setState({ mode: 'light' });
    }
  });

  it('shows the required-field messages', async () => {
    renderLogin();
    await userEvent.click(screen.getByTestId('login-submit'));
    expect(await screen.findByText('Email is a required field')).toBeInTheDocument();
    expect(screen.getByText('Password is a required field')).toBeInTheDocument();
  });

  it('shows format and length messages', async () => {
    renderLogin();
    await userEvent.type(screen.getByTestId('login-email'), 'not-an-email');
    await userEvent.type(screen.getByTestId('login-password'), 'short');
    await userEvent.click(screen.getByTestId('login-submit'));
    expect(await screen.findByText('Invalid email format')).toBeInTheDocument();
    expect(screen.getByText('Password must be at least 8 characters')).toBeInTheDocument();
  });

  it("refuses to sign in until the captcha is verified", async () => {
    const calls = mockFetch(() => ({ body: {} }));
    renderLogin();
    await userEvent.type(screen.getByTestId('login-email'), 'ada@example.com');
    await userEvent.type(screen.getByTestId('login-password'), 'correct horse');
    await userEvent.click(screen.getByTestId('login-submit'));
    expect(await screen.findByText('Captcha is not verified.')).toBeInTheDocument();
    expect(calls.filter((c) => c.url.includes('/auth/login'))).toHaveLength(0);
  });

  it('signs in with the captcha payload, stores the session and goes to /dashboard', async () => {
    const calls = mockFetch((c) =>
      c.url === '/api/v1/auth/login' ? { body: { auth_token: 'jwt-123', preferred_language: 'en', message: 'ok' } } : undefined,
    );
    const { router } = renderLogin();
    await userEvent.type(screen.getByTestId('login-email'), 'ada@example.com');
    await userEvent.type(screen.getByTestId('login-password'), 'correct horse');
    await userEvent.click(screen.getByTestId('login-remember'));
    solveCaptcha('captcha-payload');
    fireEvent.click(screen.getByTestId('login-submit'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(calls[0]).toMatchObject({
      method: 'POST',
      body: { email: 'ada@example.com', password: 'correct horse', rememberMe: true, captcha: 'captcha-payload' },
    });
    expect(readSession()).toEqual({ token: 'jwt-123', keepMeLoggedIn: true, lang: 'en', appId: null });
  });

  it("shows the server's message when sign-in fails", async () => {
    mockFetch(() => ({ status: 401, body: { message: 'Invalid email or password' } }));
    const { router } = renderLogin();
    await userEvent.type(screen.getByTestId('login-email'), 'ada@example.com');
    await userEvent.type(screen.getByTestId('login-password'), 'wrong password');
    solveCaptcha('captcha-payload');
    fireEvent.click(screen.getByTestId('login-submit'));
    expect(await screen.findByText('Invalid email or password')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/login');
    expect(readSession()).toBeNull();
    expect(screen.getByTestId('login-submit')).toHaveTextContent('Sign In');
  });
});
