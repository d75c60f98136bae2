import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../api/typed';
import { writeSession } from '../lib/session';
import { type FetchCall, mockFetch, renderAt } from '../test/utils';
import { ManageAccountsDrawer } from './ManageAccountsDrawer';
import type { OAuthClientStatus } from './OAuthClientSettings';

const GITHUB = { id: 106, name: 'GitHub', auth_type: 'OAuth2', app_type: 'api', provider: 'github' };
const REDIRECT = 'http://localhost:8080/oauth/response';
const WHO =
  'Only an administrator can configure OAuth apps. The installer names administrators with ' +
  'KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant <email>`.';

const status = (over: Partial<OAuthClientStatus> = {}): OAuthClientStatus => ({
  app_id: 106,
  app_key: 'github',
  configured: false,
  source: null,
  client_id: null,
  client_secret: null,
  redirect_url: REDIRECT,
  can_configure: true,
  who_can_configure: WHO,
  token_method: 'Personal access token',
  ...over,
});

/** The api of one OAuth2 app: its client status (changed by PUT/DELETE), accounts, the token method. */
function fakeApi(initial: OAuthClientStatus) {
  let current = initial;
  let accounts: { id: number; name: string; created_at: string }[] = [];
  const calls = mockFetch((c: FetchCall) => {
    if (c.method === 'GET' && c.url === '/api/v1/apps/106/oauth_client') return { body: current };
    if (c.url === '/api/v1/admin/oauth_clients/106' && c.method === 'PUT') {
      const body = c.body as { client_id: string; client_secret: string };
      current = { ...current, configured: true, source: 'settings', client_id: body.client_id, client_secret: '••••••' };
      return { body: current };
    }
    if (c.url === '/api/v1/admin/oauth_clients/106' && c.method === 'DELETE') {
      current = { ...current, configured: false, source: null, client_id: null, client_secret: null };
      return { body: current };
    }
    if (c.method === 'GET' && c.url === '/api/v1/apps/106/authorized_app_accounts')
      return { body: { authorized_app_accounts: accounts } };
    if (c.url === '/api/v1/auth-url')
      return {
        body: {
          type: 'token',
          auth_url: null,
          instructions: '',
          fields: [{ id: 'access_token', name: 'Personal Access Token', instructions: 'Settings > Developer settings', secret: true, required: true }],
        },
      };
    if (c.url === '/api/v1/authorization') {
      accounts = [{ id: 5, name: 'octocat', created_at: '2026-12-03T10:00:00Z' }];
      return { body: { status: 'Account added successfully', app_user_id: 5, name: 'octocat' } };
    }
    return undefined;
  });
  return calls;
}

function renderDrawer() {
  renderAt(<ManageAccountsDrawer app={GITHUB} open onClose={vi.fn()} />);
}

describe('OAuthClientSettings in the Manage Accounts drawer', () => {
  beforeEach(() => {
    queryClient.clear();
    writeSession({ token: 'session-token', keepMeLoggedIn: false, lang: 'en', appId: null });
  });

  it('an administrator enters client id and secret; the secret is sent once and shown masked', async () => {
    const calls = fakeApi(status());
    renderDrawer();
    expect(await screen.findByText('GitHub is not configured for OAuth2 on this server yet.')).toBeInTheDocument();
    expect(screen.getByTestId('oauth-redirect-url')).toHaveTextContent(REDIRECT);
    // The redirect URL is copyable.
    expect(screen.getByTestId('oauth-redirect-url').querySelector('.ant-typography-copy')).not.toBeNull();
    expect(screen.getByRole('button', { name: /New Account/ })).toBeDisabled();

    await userEvent.click(screen.getByRole('button', { name: 'Save OAuth app' }));
    expect(await screen.findByText('Client ID is required')).toBeInTheDocument();
    expect(screen.getByText('Client Secret is required')).toBeInTheDocument();

    await userEvent.type(screen.getByLabelText('Client ID'), ' Iv1.abc ');
    await userEvent.type(screen.getByLabelText('Client Secret'), 'shh-secret');
    await userEvent.click(screen.getByRole('button', { name: 'Save OAuth app' }));
    await screen.findByText("GitHub's OAuth app saved");
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.url).toBe('/api/v1/admin/oauth_clients/106');
    expect(put?.body).toEqual({ client_id: 'Iv1.abc', client_secret: 'shh-secret' });
    expect(await screen.findByText('Iv1.abc')).toBeInTheDocument();
    expect(screen.queryByText(/shh-secret/)).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: /New Account/ })).toBeEnabled());

    // Changing the client id keeps the stored secret when the secret field stays empty.
    await userEvent.click(screen.getByRole('button', { name: 'Change OAuth app' }));
    expect(screen.getByText('•••••• stored; type to replace')).toBeInTheDocument();
    const id = screen.getByLabelText('Client ID');
    await userEvent.clear(id);
    await userEvent.type(id, 'Iv1.new');
    await userEvent.click(screen.getByRole('button', { name: 'Save OAuth app' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT')[1].body).toEqual({ client_id: 'Iv1.new', client_secret: '' });
  });

  it('a client from KONNECTZ_OAUTH_CLIENTS is shown read-only', async () => {
    fakeApi(status({ configured: true, source: 'environment', client_id: 'env-id', client_secret: '••••••' }));
    renderDrawer();
    expect(await screen.findByText('env-id')).toBeInTheDocument();
    expect(screen.getByTestId('oauth-client-settings')).toHaveTextContent('KONNECTZ_OAUTH_CLIENTS');
    expect(screen.queryByRole('button', { name: 'Save OAuth app' })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: /New Account/ })).toBeEnabled();
  });

  it('someone who cannot configure it is told what to ask for, and can paste a token instead', async () => {
    const calls = fakeApi(status({ can_configure: false }));
    renderDrawer();
    const warning = await screen.findByTestId('oauth-not-configured');
    expect(warning).toHaveTextContent('Ask your administrator');
    expect(warning).toHaveTextContent('Applications › GitHub › Manage Accounts');
    expect(warning).toHaveTextContent('KONNECTZ_OAUTH_CLIENTS');
    // Who can configure it, and how the installer names an administrator (the command shown as code).
    const who = screen.getByTestId('oauth-who-can-configure');
    expect(who).toHaveTextContent('Only an administrator can configure OAuth apps.');
    expect(who).toHaveTextContent('KONNECTZ_ADMIN_EMAILS');
    expect(who.querySelector('code')).toHaveTextContent('python -m konnectz_api admin grant <email>');
    expect(who).not.toHaveTextContent('`');
    expect(screen.queryByLabelText('Client ID')).not.toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: /Use a personal access token/ }));
    await userEvent.type(await screen.findByLabelText('Personal Access Token'), 'ghp_x');
    await userEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect(await screen.findByText('octocat')).toBeInTheDocument();
    const auth = calls.find((c) => c.url === '/api/v1/authorization');
    expect(auth?.body).toEqual({ app_id: 106, redirect_url: `${window.location.origin}/oauth/response`, auth_response: { access_token: 'ghp_x' }, method: 'token' });
    expect(calls.find((c) => c.url === '/api/v1/auth-url')?.body).toMatchObject({ method: 'token' });
  });
});
