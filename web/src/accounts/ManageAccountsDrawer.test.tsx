import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../api/typed';
import { writeSession } from '../lib/session';
import { type FetchCall, mockFetch, renderAt } from '../test/utils';
import { ManageAccountsDrawer, type AppAccount } from './ManageAccountsDrawer';

const SENDGRID = { id: 7, name: 'SendGrid', auth_type: 'Token', app_type: 'api', provider: 'sendgrid' };
const SLACK = { id: 3, name: 'Slack', auth_type: 'OAuth2', app_type: 'api', provider: 'slack' };

const account = (id: number, name: string) => ({ id, name, created_at: '2026-11-21T10:00:00Z' });

/** A tiny in-memory api for one app's accounts. */
function fakeAccounts(initial: { id: number; name: string }[], opts: { inUse?: number[]; addFails?: string } = {}) {
  let accounts = initial.map((a) => account(a.id, a.name));
  const calls = mockFetch((c: FetchCall) => {
    if (c.method === 'GET' && /^\/api\/v1\/apps\/\d+\/authorized_app_accounts$/.test(c.url))
      return { body: { authorized_app_accounts: accounts } };
    const label = c.url.match(/^\/api\/v1\/app_users\/(\d+)\/update_label$/);
    if (label) {
      const id = Number(label[1]);
      accounts = accounts.map((a) => (a.id === id ? { ...a, name: (c.body as { label: string }).label } : a));
      return { body: { message: 'SUCCESS' } };
    }
    const status = c.url.match(/^\/api\/v1\/app_users\/(\d+)\/update_status$/);
    if (status) {
      const id = Number(status[1]);
      if (opts.inUse?.includes(id))
        return { status: 409, body: { message: 'FAILURE', details: 'Cannot delete this account as it contains active Konnectz' } };
      accounts = accounts.filter((a) => a.id !== id);
      return { body: { message: 'SUCCESS', details: 'Account removed' } };
    }
    if (c.url === '/api/v1/auth-url')
      return {
        body: {
          type: 'token',
          auth_url: null,
          instructions: 'Create an API key under Settings.',
          fields: [
            { id: 'api_key', name: 'Api Key', instructions: 'Starts with SG.', secret: true, required: true },
            { id: 'region', name: 'Region', instructions: '', secret: false, required: true },
          ],
        },
      };
    if (c.url === '/api/v1/authorization') {
      if (opts.addFails) return { status: 400, body: { message: opts.addFails, status: opts.addFails } };
      accounts = [...accounts, account(99, 'SendGrid #1')];
      return { body: { status: 'Account added successfully', app_user_id: 99, name: 'SendGrid #1' } };
    }
    return undefined;
  });
  return calls;
}

/** antd's inline editor confirms on a keydown + keyup of Enter (keyCode 13). */
function pressEnter(box: HTMLElement) {
  fireEvent.keyDown(box, { key: 'Enter', keyCode: 13 });
  fireEvent.keyUp(box, { key: 'Enter', keyCode: 13 });
}

function renderDrawer(props: Partial<Parameters<typeof ManageAccountsDrawer>[0]> = {}) {
  const onClose = vi.fn();
  const onAccountsChanged = vi.fn<(accounts: AppAccount[]) => void>();
  renderAt(<ManageAccountsDrawer app={SENDGRID} open onClose={onClose} onAccountsChanged={onAccountsChanged} {...props} />);
  return { onClose, onAccountsChanged };
}

describe('ManageAccountsDrawer', () => {
  beforeEach(() => {
    queryClient.clear();
    writeSession({ token: 'session-token', keepMeLoggedIn: false, lang: 'en', appId: null });
  });

  it('lists the accounts, names cut beyond 10 characters, under the "- Manage Accounts" title', async () => {
    const calls = fakeAccounts([
      { id: 1, name: 'Marketing team account' },
      { id: 2, name: 'Sales' },
    ]);
    renderDrawer();
    expect(await screen.findByText('Marketing ...')).toBeInTheDocument();
    expect(screen.getByText('Sales')).toBeInTheDocument();
    expect(screen.getByText('- Manage Accounts')).toBeInTheDocument();
    expect(screen.getByTestId('manage-accounts-title')).toHaveTextContent('SendGrid- Manage Accounts');
    expect(screen.getByRole('button', { name: /New Account/ })).toBeInTheDocument();
    expect(calls[0].url).toBe('/api/v1/apps/7/authorized_app_accounts');
    expect(calls[0].headers.authorization).toBe('Bearer session-token');
  });

  it('shows the empty texts without accounts', async () => {
    fakeAccounts([]);
    renderDrawer();
    expect(await screen.findByText('No Account Found.')).toBeInTheDocument();
    expect(screen.getByText('Please add an account to continue.')).toBeInTheDocument();
  });

  it('renames an account inline through update_label', async () => {
    const calls = fakeAccounts([{ id: 1, name: 'Sales' }]);
    const { onAccountsChanged } = renderDrawer();
    await screen.findByText('Sales');
    await userEvent.click(screen.getByRole('button', { name: 'Rename' }));
    const box = screen.getByRole('textbox');
    await userEvent.clear(box);
    await userEvent.type(box, 'Support');
    pressEnter(box);
    expect(await screen.findByText('Successfully Changed the name of Account')).toBeInTheDocument();
    expect(await screen.findByText('Support')).toBeInTheDocument();
    const rename = calls.find((c) => c.url === '/api/v1/app_users/1/update_label');
    expect(rename?.body).toEqual({ label: 'Support' });
    await waitFor(() => expect(onAccountsChanged).toHaveBeenCalledWith([expect.objectContaining({ id: 1, name: 'Support' })]));
  });

  it('does not call the server when the name did not change', async () => {
    const calls = fakeAccounts([{ id: 1, name: 'Sales' }]);
    renderDrawer();
    await screen.findByText('Sales');
    await userEvent.click(screen.getByRole('button', { name: 'Rename' }));
    pressEnter(screen.getByRole('textbox'));
    await screen.findByText('Sales');
    expect(calls.some((c) => c.url.includes('update_label'))).toBe(false);
  });

  it('removes an account (SUCCESS) and refuses one a published konnect uses (FAILURE)', async () => {
    const calls = fakeAccounts(
      [
        { id: 1, name: 'Sales' },
        { id: 2, name: 'Busy' },
      ],
      { inUse: [2] },
    );
    const { onAccountsChanged } = renderDrawer();
    await screen.findByText('Busy');

    await userEvent.click(screen.getByRole('button', { name: 'Remove Busy' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Remove' }));
    expect(await screen.findByText('Cannot delete this account as it contains active Konnectz')).toBeInTheDocument();
    expect(screen.getByText('Busy')).toBeInTheDocument();
    expect(calls.find((c) => c.url === '/api/v1/app_users/2/update_status')?.body).toEqual({ status: 'REMOVE' });

    await userEvent.click(screen.getByRole('button', { name: 'Remove Sales' }));
    const confirms = await screen.findAllByRole('button', { name: 'Remove' });
    await userEvent.click(confirms[confirms.length - 1]);
    expect(await screen.findByText('Account removed')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByText('Sales')).not.toBeInTheDocument());
    await waitFor(() => expect(onAccountsChanged).toHaveBeenCalledWith([expect.objectContaining({ id: 2 })]));
  });

  it('token apps: New Account shows the fields with Add and Cancel; Add saves and reloads the list', async () => {
    const calls = fakeAccounts([]);
    renderDrawer();
    await screen.findByText('No Account Found.');
    await userEvent.click(screen.getByRole('button', { name: /New Account/ }));
    const form = await screen.findByTestId('token-fields-form');
    expect(within(form).getByText('Create an API key under Settings.')).toBeInTheDocument();
    expect(within(form).getByText('Starts with SG.')).toBeInTheDocument();
    // both fields are required
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }));
    expect(await within(form).findByText('Api Key is required')).toBeInTheDocument();
    expect(calls.some((c) => c.url === '/api/v1/authorization')).toBe(false);

    await userEvent.type(within(form).getByLabelText('Api Key'), 'SG.secret');
    await userEvent.type(within(form).getByLabelText('Region'), ' eu ');
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }));
    expect(await screen.findByText('Account added successfully')).toBeInTheDocument();
    expect(await screen.findByText('SendGrid #...')).toBeInTheDocument();
    expect(screen.queryByTestId('token-fields-form')).not.toBeInTheDocument();
    const add = calls.find((c) => c.url === '/api/v1/authorization');
    expect(add?.body).toEqual({
      app_id: 7,
      redirect_url: `${window.location.origin}/oauth/response`,
      auth_response: { api_key: 'SG.secret', region: 'eu' },
    });
    expect(within(screen.getByTestId('accounts-list')).getAllByTestId(/^account-\d+$/)).toHaveLength(1);
  });

  it('token apps: a failed test request shows the server status text and keeps the form; Cancel closes it', async () => {
    fakeAccounts([], { addFails: 'The test request failed: 401 Unauthorized' });
    renderDrawer();
    await screen.findByText('No Account Found.');
    await userEvent.click(screen.getByRole('button', { name: /New Account/ }));
    const form = await screen.findByTestId('token-fields-form');
    await userEvent.type(within(form).getByLabelText('Api Key'), 'bad');
    await userEvent.type(within(form).getByLabelText('Region'), 'eu');
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }));
    expect(await screen.findByText('The test request failed: 401 Unauthorized')).toBeInTheDocument();
    expect(screen.getByTestId('token-fields-form')).toBeInTheDocument();
    await userEvent.click(within(form).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByTestId('token-fields-form')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: /New Account/ })).toBeInTheDocument();
  });

  it('OAuth apps: New Account opens an 800x600 popup, focuses it when open, reloads when it closes', async () => {
    const calls = fakeAccounts([]);
    const popup = { closed: false, focus: vi.fn() };
    const open = vi.spyOn(window, 'open').mockReturnValue(popup as unknown as Window);
    renderDrawer({ app: SLACK });
    await screen.findByText('No Account Found.');
    await userEvent.click(screen.getByRole('button', { name: /New Account/ }));
    expect(open).toHaveBeenCalledTimes(1);
    const [url, name, features] = open.mock.calls[0];
    expect(url).toBe(`${window.location.origin}/oauth/response/3/session-token`);
    expect(name).toBe('konnectz-oauth');
    expect(features).toMatch(/width=800,height=600/);

    await userEvent.click(screen.getByRole('button', { name: /New Account/ }));
    expect(open).toHaveBeenCalledTimes(1);
    expect(popup.focus).toHaveBeenCalledTimes(2);

    const before = calls.filter((c) => c.url.endsWith('authorized_app_accounts')).length;
    popup.closed = true;
    await waitFor(
      () => expect(calls.filter((c) => c.url.endsWith('authorized_app_accounts')).length).toBe(before + 1),
      { timeout: 3500 },
    );
    expect(calls.some((c) => c.url === '/api/v1/auth-url')).toBe(false);
  });

  it('OAuth apps: a blocked popup says so', async () => {
    fakeAccounts([]);
    vi.spyOn(window, 'open').mockReturnValue(null);
    renderDrawer({ app: SLACK });
    await screen.findByText('No Account Found.');
    fireEvent.click(screen.getByRole('button', { name: /New Account/ }));
    expect(await screen.findByText(/blocked the popup/)).toBeInTheDocument();
  });

  it('refuses apps that are not manageable with the toast and closes', async () => {
    const calls = fakeAccounts([]);
    const { onClose } = renderDrawer({
      app: { id: 1, name: 'Webhook', auth_type: 'Token', app_type: 'WEBHOOK', provider: 'webhook' },
      appIndex: 1,
    });
    expect(await screen.findByText('Webhook is not manageable.')).toBeInTheDocument();
    expect(onClose).toHaveBeenCalled();
    expect(screen.queryByText('- Manage Accounts')).not.toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });
});
