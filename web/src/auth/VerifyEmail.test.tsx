import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderRoutes } from '../test/utils';
import { AuthScreen } from './AuthScreen';

const renderVerify = (token: string) => renderRoutes([{ path: '/verify-email/:token', element: <AuthScreen /> }], `/verify-email/${token}`);

describe('VerifyEmail', () => {
  it('shows Pending, then Completed with a sign-in link', async () => {
    const calls = mockFetch(() => ({ body: { key: 'VERIFY_EMAIL_SUCCESS', message: 'ok' } }));
    renderVerify('tok-ok');
    expect(screen.getByText('VERIFY EMAIL')).toBeInTheDocument();
    expect(screen.getByTestId('verify-status')).toHaveTextContent('Verification Pending');
    expect(await screen.findByText('Verification Completed')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Sign In' })).toHaveAttribute('href', '/login');
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toEqual({ confirmation_token: 'tok-ok' });
    // Every auth view but the login shows the Terms & Conditions notice.
    expect(screen.getByTestId('verify-terms')).toHaveTextContent(/^By clicking continue, you agree/);
  });

  it('shows Failed with the spec text', async () => {
    mockFetch(() => ({ status: 400, body: { key: 'VERIFY_EMAIL_FAIL', message: 'bad' } }));
    renderVerify('tok-bad');
    expect(await screen.findByText('Verification Failed')).toBeInTheDocument();
    expect(screen.getByText('We were unable to verify this account. Contact us to know more.')).toBeInTheDocument();
  });
});
