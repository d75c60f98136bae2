import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../api/typed';
import { writeSession } from '../lib/session';
import { type FetchCall, mockFetch, renderAt } from '../test/utils';
import { ManageAccountsDrawer } from './ManageAccountsDrawer';
import { budgetSummary, rateText, type RateBudgetInfo } from './RateBudget';

const SLACK = { id: 3, name: 'Slack', auth_type: 'Token', app_type: 'api', provider: 'slack' };

const appDefault: RateBudgetInfo = {
  account_id: 11,
  rate_limit_rps: null,
  app_rate_rps: 1,
  rate_rps: 1,
  source: 'app default',
  burst: 1,
  tokens_left: 1,
  used_last_minute: 3,
  live: true,
};

/** One account of Slack whose budget the PUT route changes. */
function fakeApi() {
  let budget = appDefault;
  const calls = mockFetch((c: FetchCall) => {
    if (c.method === 'GET' && c.url === '/api/v1/apps/3/authorized_app_accounts')
      return { body: { authorized_app_accounts: [{ id: 11, name: 'Work', created_at: '2026-11-21T10:00:00Z', rate_budget: budget }] } };
    if (c.method === 'PUT' && c.url === '/api/v1/app_users/11/rate_budget') {
      const rate = (c.body as { rate_limit_rps: number | null }).rate_limit_rps;
      budget =
        rate == null
          ? appDefault
          : { ...appDefault, rate_limit_rps: rate, rate_rps: rate, source: 'override', used_last_minute: 3 };
      return { body: budget };
    }
    return undefined;
  });
  return calls;
}

describe('RateBudget in the Manage Accounts drawer', () => {
  beforeEach(() => {
    queryClient.clear();
    writeSession({ token: 'session-token', keepMeLoggedIn: false, lang: 'en', appId: null });
  });

  it('formats a budget', () => {
    expect(rateText(1)).toBe('1 request/s');
    expect(rateText(2.5)).toBe('2.5 requests/s');
    expect(budgetSummary(appDefault)).toBe('1 request/s - app default · used 3 in the last minute');
    expect(budgetSummary({ ...appDefault, rate_rps: null, source: 'none' })).toBe('No rate budget - the app sets none');
    expect(budgetSummary({ ...appDefault, used_last_minute: null, live: false })).toBe('1 request/s - app default · use unknown');
  });

  it('shows the budget, refuses a rate out of bounds, sets and clears the override', async () => {
    const calls = fakeApi();
    renderAt(<ManageAccountsDrawer app={SLACK} open onClose={vi.fn()} />);
    const summary = await screen.findByTestId('rate-budget-summary-11');
    expect(summary).toHaveTextContent('1 request/s - app default · used 3 in the last minute');

    await userEvent.click(screen.getByTestId('rate-budget-edit-11'));
    const input = screen.getByLabelText('Requests per second');
    await userEvent.clear(input);
    await userEvent.type(input, '5000');
    await userEvent.click(screen.getByTestId('rate-budget-save-11'));
    expect(await screen.findByTestId('rate-budget-error-11')).toHaveTextContent(
      'Enter a rate from 0.01 to 1000 requests per second',
    );
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);

    await userEvent.clear(input);
    await userEvent.type(input, '2.5');
    await userEvent.click(screen.getByTestId('rate-budget-save-11'));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ rate_limit_rps: 2.5 });
    await waitFor(() =>
      expect(screen.getByTestId('rate-budget-summary-11')).toHaveTextContent('2.5 requests/s - your setting · used 3'),
    );

    await userEvent.click(screen.getByTestId('rate-budget-edit-11'));
    await userEvent.click(screen.getByTestId('rate-budget-clear-11'));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT')[1].body).toEqual({ rate_limit_rps: null });
    await waitFor(() => expect(screen.getByTestId('rate-budget-summary-11')).toHaveTextContent('1 request/s - app default'));
  });
});
