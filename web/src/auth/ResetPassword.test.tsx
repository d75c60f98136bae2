import { fireEvent, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderRoutes } from '../test/utils';
import { AuthScreen } from './AuthScreen';

const renderReset = () => renderRoutes([{ path: '/reset-password/:token', element: <AuthScreen /> }], '/reset-password/tok-1');

function fill(password: string, confirmation: string) {
  fireEvent.change(screen.getByTestId('reset-password'), { target: { value: password } });
  fireEvent.change(screen.getByTestId('reset-password-confirmation'), { target: { value: confirmation } });
  fireEvent.click(screen.getByTestId('reset-submit'));
}

describe('ResetPassword (the shared new-password fields)', () => {
  it('asks for the api minimum length and a matching confirmation, without a call', async () => {
    const calls = mockFetch(() => ({ body: {} }));
    renderReset();
    expect(screen.getByText('RESET PASSWORD')).toBeInTheDocument();
    expect(screen.getByText('New Password')).toBeInTheDocument();
    fill('short', 'other');
    expect(await screen.findByText('Password must be at least 8 characters')).toBeInTheDocument();
    expect(await screen.findByText('Password do not match. Try again!')).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });

  it('sends the token with the new password', async () => {
    const calls = mockFetch(() => ({ body: { key: 'PASSWORD_UPDATED', message: 'Password updated.' } }));
    renderReset();
    fill('n3w-password', 'n3w-password');
    expect(await screen.findByText('Password updated.')).toBeInTheDocument();
    expect(calls[0]).toMatchObject({
      url: '/api/v1/users/update_user_password',
      body: { reset_password_token: 'tok-1', password: 'n3w-password', password_confirmation: 'n3w-password' },
    });
  });
});
