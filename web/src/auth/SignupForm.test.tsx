import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderRoutes } from '../test/utils';
import { AuthScreen } from './AuthScreen';

const renderSignup = () => renderRoutes([{ path: '/signup', element: <AuthScreen /> }], '/signup');

async function passEmailStep(email = 'new@example.com') {
  await userEvent.type(screen.getByTestId('signup-email'), email);
  await userEvent.click(screen.getByTestId('signup-continue'));
}

describe('SignupForm', () => {
  it('shows the REGISTER NOW tab and the terms notice', () => {
    renderSignup();
    expect(screen.getByText('REGISTER NOW')).toBeInTheDocument();
    expect(screen.getByText(/^By clicking continue, you agree/)).toBeInTheDocument();
  });

  it('stays on the email step when the address is taken', async () => {
    const calls = mockFetch((c) => (c.url.endsWith('/users/user_exists') ? { body: { key: 'USER_EXISTS', message: 'exists' } } : undefined));
    renderSignup();
    await passEmailStep('taken@example.com');
    expect(await screen.findByText('E-mail address already in use.')).toBeInTheDocument();
    expect(calls[0].body).toEqual({ email: 'taken@example.com' });
    expect(screen.getByTestId('signup-email')).toBeInTheDocument();
    expect(screen.queryByTestId('signup-first-name')).not.toBeInTheDocument();
  });

  it('checks matching passwords on the client', async () => {
    const calls = mockFetch((c) => (c.url.endsWith('/users/user_exists') ? { body: { key: 'NO_USER', message: '' } } : undefined));
    renderSignup();
    await passEmailStep();
    await userEvent.type(await screen.findByTestId('signup-first-name'), 'Ada');
    await userEvent.type(screen.getByTestId('signup-last-name'), 'Lovelace');
    await userEvent.type(screen.getByTestId('signup-password'), 'password-one');
    await userEvent.type(screen.getByTestId('signup-password-confirmation'), 'password-two');
    await userEvent.click(screen.getByTestId('signup-submit'));
    expect(await screen.findByText('Password do not match. Try again!')).toBeInTheDocument();
    expect(calls.filter((c) => c.url.endsWith('/signup'))).toHaveLength(0);
  });

  it('signs up after NO_USER and tells the user a verification link was sent', async () => {
    const calls = mockFetch((c) => {
      if (c.url.endsWith('/users/user_exists')) return { body: { key: 'NO_USER', message: '' } };
      if (c.url.endsWith('/signup')) return { status: 201, body: { key: 'SIGNUP_SUCCESS', message: 'Signed up' } };
      return undefined;
    });
    renderSignup();
    await passEmailStep();
    await userEvent.type(await screen.findByTestId('signup-first-name'), 'Ada');
    await userEvent.type(screen.getByTestId('signup-last-name'), 'Lovelace');
    await userEvent.type(screen.getByTestId('signup-password'), 'password-one');
    await userEvent.type(screen.getByTestId('signup-password-confirmation'), 'password-one');
    await userEvent.click(screen.getByTestId('signup-submit'));
    expect(await screen.findByTestId('signup-done')).toHaveTextContent('verification link to new@example.com');
    expect(calls[1]).toMatchObject({
      method: 'POST',
      url: '/api/v1/signup',
      body: {
        email: 'new@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        password: 'password-one',
        password_confirmation: 'password-one',
        is_admin: false,
      },
    });
  });

  it('shows "Something went wrong!" when sign-up fails without a message', async () => {
    mockFetch((c) => {
      if (c.url.endsWith('/users/user_exists')) return { body: { key: 'NO_USER', message: '' } };
      return { status: 500, body: {} };
    });
    renderSignup();
    await passEmailStep();
    await userEvent.type(await screen.findByTestId('signup-first-name'), 'Ada');
    await userEvent.type(screen.getByTestId('signup-last-name'), 'L');
    await userEvent.type(screen.getByTestId('signup-password'), 'password-one');
    await userEvent.type(screen.getByTestId('signup-password-confirmation'), 'password-one');
    await userEvent.click(screen.getByTestId('signup-submit'));
    await waitFor(() => expect(screen.getByText('Something went wrong!')).toBeInTheDocument());
  });
});
