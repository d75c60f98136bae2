import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { writeSession } from '../../lib/session';
import { useSession } from '../../lib/sessionStore';
import { renderRoutes } from '../../test/utils';
import { AccountPage } from './AccountPage';

interface Call {
  method: string;
  path: string;
  search: string;
  body: unknown;
}

const PROFILE = { id: 1, email: 'ada@example.com', first_name: 'Ada', last_name: 'L', image_url: null, current_plan: 'Team', country: null, timezone: null, preferred_language: 'en', is_admin: false };
const MEMBER = { id: 7, name: 'Cre Ate', first_name: 'Cre', last_name: 'Ate', email: 'c@example.com', access: 'Create', task: null, task_consumed: null, remaining: null };

function fakeApi(reply: (c: Call) => { status?: number; body: unknown }) {
  const calls: Call[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
    const text = await req.text();
    const url = new URL(req.url, 'http://localhost');
    const call = { method: req.method, path: url.pathname, search: url.search, body: text ? JSON.parse(text) : undefined };
    calls.push(call);
    const r = reply(call);
    return new Response(JSON.stringify(r.body), { status: r.status ?? 200, headers: { 'Content-Type': 'application/json' } });
  });
  return calls;
}

const render = () => renderRoutes([{ path: '/account/:tab', element: <AccountPage /> }], '/account/members');

describe('Members tab', () => {
  beforeEach(() => {
    queryClient.clear();
    const record = { token: 't', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(record);
    useSession.setState({ session: record });
  });
  afterEach(() => vi.restoreAllMocks());

  it('says the feature is not available on other plans', async () => {
    fakeApi(() => ({ body: { ...PROFILE, current_plan: 'Free' } }));
    render();
    expect(await screen.findByText('This feature is not available for Free')).toBeInTheDocument();
    // The notice links to the plans (Billing & Usage).
    fireEvent.click(screen.getByTestId('upgrade-link'));
    expect(await screen.findByTestId('subscription-plan')).toHaveTextContent('Free');
  });

  it('lists, adds with an access level and deletes team members', async () => {
    let members = [MEMBER];
    const calls = fakeApi((c) => {
      if (c.path === '/api/v1/users/profile') return { body: PROFILE };
      if (c.path === '/api/v1/members/list_team_users') return { body: { team_users: members, total: members.length, allowed_limit: 25 } };
      if (c.path === '/api/v1/members/add_team_user') {
        members = [...members, { ...MEMBER, id: 8, name: 'Del Ete', email: 'd@example.com', access: 'Create/Delete' }];
        return { body: { message: 'Member added', member: members[1] } };
      }
      if (c.path === '/api/v1/members/remove_team_user') {
        members = members.filter((m) => `?sub_account_id=${m.id}` !== c.search);
        return { body: { message: 'Member removed' } };
      }
      return { status: 404, body: { message: 'nope' } };
    });
    render();
    const table = await screen.findByTestId('team-members');
    expect(await within(table).findByText('c@example.com')).toBeInTheDocument();
    expect(within(table).getByText('Create')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId('member-add'));
    fireEvent.change(await screen.findByTestId('member-first-name'), { target: { value: 'Del' } });
    fireEvent.change(screen.getByTestId('member-last-name'), { target: { value: 'Ete' } });
    fireEvent.change(screen.getByTestId('member-email'), { target: { value: 'd@example.com' } });
    fireEvent.mouseDown(within(screen.getByTestId('member-access')).getByRole('combobox'));
    fireEvent.click(await screen.findByTitle('Create/Delete'));
    fireEvent.click(screen.getByTestId('member-save'));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/v1/members/add_team_user')).toBe(true));
    expect(calls.find((c) => c.path === '/api/v1/members/add_team_user')?.body).toEqual({
      first_name: 'Del',
      last_name: 'Ete',
      email: 'd@example.com',
      access: 'Create/Delete',
    });
    expect(await within(table).findByText('d@example.com')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId('member-delete-7'));
    await waitFor(() => expect(document.querySelector('.ant-popconfirm')).not.toBeNull());
    fireEvent.click(within(document.querySelector('.ant-popconfirm') as HTMLElement).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(within(table).queryByText('c@example.com')).not.toBeInTheDocument());
    expect(calls.find((c) => c.path === '/api/v1/members/remove_team_user')?.search).toBe('?sub_account_id=7');
  });

  it('shows agency sub-accounts with task totals and remaining', async () => {
    fakeApi((c) => {
      if (c.path === '/api/v1/users/profile') return { body: { ...PROFILE, current_plan: 'Agency' } };
      if (c.path === '/api/v1/members/list_agency_users')
        return {
          body: {
            total_tasks: 50000,
            task_consumed: 12,
            total_subaccounts: 1,
            allowed_subaccount_limit: 10,
            sub_accounts: [{ ...MEMBER, access: null, name: 'Sub One', email: 's@example.com', task: 300, task_consumed: 120, remaining: 180 }],
          },
        };
      return { status: 404, body: { message: 'nope' } };
    });
    render();
    const agency = await screen.findByTestId('agency-members');
    expect(await within(agency).findByText('s@example.com')).toBeInTheDocument();
    expect(within(agency).getByText('180')).toBeInTheDocument();
    expect(within(agency).getByText('1 / 10')).toBeInTheDocument();
    expect(within(agency).getByText('50,000')).toBeInTheDocument();
  });
});
