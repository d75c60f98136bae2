import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { readSession, writeSession } from '../../lib/session';
import { useSession } from '../../lib/sessionStore';
import { renderRoutes } from '../../test/utils';
import { useProfile } from '../../shell/profileStore';
import { AccountPage, timezoneGroups } from './AccountPage';

interface Call {
  method: string;
  path: string;
  body: unknown;
  auth: string | null;
}

const PROFILE = {
  id: 1,
  email: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'L',
  image_url: null,
  current_plan: 'Free',
  country: null,
  timezone: null,
  preferred_language: 'en',
  is_admin: false,
};
const OPTIONS = {
  countries: [
    { value: 'DE', label: 'Germany' },
    { value: 'JP', label: 'Japan' },
  ],
  timezones: [
    { value: 'GMT+05:30', label: 'GMT+05:30 (Asia/Colombo, Asia/Kolkata)', offset_minutes: 330 },
    { value: 'Europe/Berlin', label: '(GMT+01:00) Europe/Berlin', offset_minutes: 60 },
  ],
};

/** openapi-fetch hands fetch a Request: record method, path, JSON body and the bearer token. */
function fakeApi(reply: (c: Call) => { status?: number; body: unknown }) {
  const calls: Call[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
    const text = await req.text();
    const call = {
      method: req.method,
      path: new URL(req.url, 'http://localhost').pathname,
      body: text ? JSON.parse(text) : undefined,
      auth: req.headers.get('Authorization'),
    };
    calls.push(call);
    const r = reply(call);
    return new Response(JSON.stringify(r.body), { status: r.status ?? 200, headers: { 'Content-Type': 'application/json' } });
  });
  return calls;
}

const render = (path: string) => renderRoutes([{ path: '/account/:tab', element: <AccountPage /> }], path);

describe('AccountPage', () => {
  beforeEach(() => {
    queryClient.clear();
    const record = { token: 'old-token', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(record);
    useSession.setState({ session: record });
  });
  afterEach(() => vi.restoreAllMocks());

  it('shows the five tabs and saves the editable profile fields', async () => {
    const calls = fakeApi((c) => {
      if (c.path === '/api/v1/users/profile' && c.method === 'GET') return { body: PROFILE };
      if (c.path === '/api/v1/users/profile/options') return { body: OPTIONS };
      if (c.path === '/api/v1/users/profile' && c.method === 'POST')
        return { body: { key: 'UPDATE_SUCCESS', message: 'ok', profile: { ...PROFILE, first_name: 'Grace' } } };
      return { status: 404, body: { message: 'nope' } };
    });
    render('/account/profile');
    for (const label of ['Profile', 'Avatar', 'Password', 'Members', 'Billing & Usage']) {
      expect(screen.getByRole('tab', { name: label })).toBeInTheDocument();
    }
    const first = await screen.findByTestId('profile-first-name');
    await waitFor(() => expect(first).toHaveValue('Ada'));
    expect(screen.getByTestId('profile-email')).toBeDisabled();
    fireEvent.change(first, { target: { value: 'Grace' } });
    expect(screen.getByTestId('profile-save')).toHaveTextContent(/^Save Changes$/);
    fireEvent.click(screen.getByTestId('profile-save'));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    const post = calls.find((c) => c.method === 'POST')!;
    expect(post.body).toMatchObject({ first_name: 'Grace', last_name: 'L' });
    expect(post.auth).toBe('Bearer old-token');
    expect(await screen.findByText('Profile updated')).toBeInTheDocument();
  });

  it('offers time zones as GMT offsets first, then regions, and saves a GMT offset', async () => {
    expect(timezoneGroups(OPTIONS.timezones).map((g) => [g.label, g.options.map((o) => o.value)])).toEqual([
      ['GMT offsets', ['GMT+05:30']],
      ['Regions (follow daylight saving time)', ['Europe/Berlin']],
    ]);
    const calls = fakeApi((c) => {
      if (c.path === '/api/v1/users/profile' && c.method === 'GET') return { body: { ...PROFILE, timezone: 'GMT+05:30' } };
      if (c.path === '/api/v1/users/profile/options') return { body: OPTIONS };
      if (c.path === '/api/v1/users/profile' && c.method === 'POST')
        return { body: { key: 'UPDATE_SUCCESS', message: 'ok', profile: { ...PROFILE, timezone: 'GMT+05:30' } } };
      return { status: 404, body: { message: 'nope' } };
    });
    render('/account/profile');
    expect(await screen.findByText('GMT+05:30 (Asia/Colombo, Asia/Kolkata)')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId('profile-save'));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    expect(calls.find((c) => c.method === 'POST')!.body).toMatchObject({ timezone: 'GMT+05:30' });
  });

  it('changes the password, keeps the session with the new token, shows the server message on failure', async () => {
    let fail = true;
    const calls = fakeApi((c) => {
      if (c.path !== '/api/v1/users/change_password') return { status: 404, body: { message: 'nope' } };
      if (fail) return { status: 400, body: { key: 'WRONG_PASSWORD', message: 'Your current password is not correct.' } };
      return { body: { key: 'UPDATE_SUCCESS', message: 'Password updated', auth_token: 'new-token' } };
    });
    render('/account/password');
    const fill = () => {
      fireEvent.change(screen.getByTestId('password-current'), { target: { value: 'old-pass-1' } });
      fireEvent.change(screen.getByTestId('password-new'), { target: { value: 'n3w-password' } });
      fireEvent.change(screen.getByTestId('password-confirmation'), { target: { value: 'n3w-password' } });
      fireEvent.click(screen.getByTestId('password-save'));
    };
    fill();
    expect(await screen.findByText('Your current password is not correct.')).toBeInTheDocument();
    expect(readSession()?.token).toBe('old-token');
    fail = false;
    fill();
    expect(await screen.findByText('Password updated')).toBeInTheDocument();
    expect(readSession()?.token).toBe('new-token');
    expect(calls.at(-1)!.body).toEqual({
      current_password: 'old-pass-1',
      password: 'n3w-password',
      password_confirmation: 'n3w-password',
    });
  });

  it('refuses a mismatched confirmation without calling the api', async () => {
    const calls = fakeApi(() => ({ body: {} }));
    render('/account/password');
    fireEvent.change(screen.getByTestId('password-current'), { target: { value: 'old-pass-1' } });
    fireEvent.change(screen.getByTestId('password-new'), { target: { value: 'n3w-password' } });
    fireEvent.change(screen.getByTestId('password-confirmation'), { target: { value: 'other-pass' } });
    fireEvent.click(screen.getByTestId('password-save'));
    expect(await screen.findByText('Password do not match. Try again!')).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });

  it("shows only the plan's name on Billing & Usage: 'Complete' for Team", async () => {
    fakeApi((c) =>
      c.path === '/api/v1/users/usage'
        ? { body: { current_plan: 'Team', task_limit: 10000, task_consumed: 42, task_available: 9958 } }
        : { status: 404, body: { message: 'nope' } },
    );
    render('/account/subscription');
    expect(await screen.findByTestId('subscription-plan')).toHaveTextContent(/^Complete$/);
    expect(screen.getByTestId('billing-usage')).not.toHaveTextContent('Team');
  });

  it('shows every plan as a card with an action; a change explains how an administrator assigns the plan', async () => {
    useProfile.setState({ profile: { ...PROFILE } as never });
    fakeApi((c) =>
      c.path === '/api/v1/users/usage'
        ? { body: { current_plan: 'Free', task_limit: 1000, task_consumed: 0, task_available: 1000 } }
        : c.path === '/api/v1/plans'
          ? {
              body: [
                { name: 'Free', task_limit: 1000, price: '$0' },
                { name: 'Team', task_limit: 10000, price: '$29/Month' },
                { name: 'Premium', task_limit: 25000, price: '$99/Year' },
              ],
            }
          : { status: 404, body: { message: 'nope' } },
    );
    render('/account/subscription');
    expect(await screen.findByTestId('plan-card-Premium')).toHaveTextContent('$99/Year');
    expect(screen.getByTestId('plan-action-Free')).toBeDisabled();
    expect(screen.getByTestId('plan-action-Free')).toHaveTextContent('Current Plan');
    expect(screen.getByTestId('plan-action-Team')).toHaveTextContent('Change to Complete');
    fireEvent.click(screen.getByTestId('plan-action-Premium'));
    expect(await screen.findByTestId('plan-change-command')).toHaveTextContent(
      'python -m konnectz_api plan set ada@example.com Premium',
    );
    expect(screen.getByTestId('plan-change-modal')).toHaveTextContent('POST /api/v1/admin/users/plan');
  });
});
