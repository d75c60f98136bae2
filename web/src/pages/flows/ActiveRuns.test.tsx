import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderRoutes } from '../../test/utils';
import { HistoryPage } from '../logs/HistoryPage';
import { activeLabel, CANCEL_ASKED } from './ActiveRuns';

const flow = {
  id: 3,
  konnect_name: 'Remind later',
  status: 'Published',
  created_at: '2026-11-21T10:00:00Z',
  success_task_count: 0,
  error_task_count: 0,
  left_app: { name: 'Webhook' },
  right_apps: [{ app_name: 'Delay' }],
  webhook_url: 'http://hooks/x',
  folder_id: null,
};
const waiting = {
  run_id: 'abcdef0123456789',
  konnect_id: 3,
  status: 'WAITING' as const,
  since: '2026-11-27T01:00:00Z',
  step_id: 'node-3',
  resume_at: '2026-11-27T02:00:00Z',
};

describe('ActiveRuns', () => {
  beforeEach(() => queryClient.clear());

  it('says what a run does in words', () => {
    expect(activeLabel({ ...waiting, status: 'QUEUED' })).toBe('Queued');
    expect(activeLabel({ ...waiting, status: 'RUNNING', step_id: 'node-2' })).toBe('Running (node-2)');
    expect(activeLabel(waiting)).toMatch(/^Waiting until 27 Nov 2026, \d\d:00:00$/);
    const call = { ...waiting, waiting_for: 'a call to its resume URL', waiting_since: '2026-11-27T01:30:00Z' };
    expect(activeLabel(call)).toMatch(
      /^Waiting for a call to its resume URL since 27 Nov 2026, \d\d:30:00, at most until 27 Nov 2026, \d\d:00:00$/,
    );
  });

  it('links a run waiting for an approval to the Approvals page, where it is decided', async () => {
    const asked = { ...waiting, waiting_for: 'approval by a@x.io', waiting_since: '2026-11-27T01:30:00Z' };
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow], total_konnects: 1 } };
      if (c.url === '/api/v1/konnects/3/runs/active') return { body: { runs: [asked] } };
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3')) return { body: { task_logs: [], total: 0 } };
      return undefined;
    });
    renderRoutes([{ path: '/logs', element: <HistoryPage /> }], '/logs');
    await userEvent.click(await screen.findByTestId('history-open-3'));
    const row = await screen.findByTestId(`active-run-${asked.run_id}`);
    expect(within(row).getByTestId(`active-run-status-${asked.run_id}`)).toHaveTextContent('Waiting for approval by a@x.io since');
    expect(within(row).getByTestId(`active-run-approvals-${asked.run_id}`)).toHaveAttribute('href', '/approvals');
  }, 30_000);

  it('lists the flow’s waiting run in the history drawer, cancels it after a confirm, then shows who cancelled it', async () => {
    let cancelled = false;
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow], total_konnects: 1 } };
      if (c.url === '/api/v1/konnects/3/runs/active') return { body: { runs: cancelled ? [] : [waiting] } };
      if (c.url === `/api/v1/konnects/3/runs/${waiting.run_id}/cancel` && c.method === 'POST') {
        cancelled = true;
        return { status: 202, body: { message: 'cancelling', run_id: waiting.run_id, status: 'WAITING' } };
      }
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return {
          body: {
            task_logs: cancelled
              ? [{ id: 7, konnect_id: 3, status: 'CANCELLED', task_date: '2026-11-27T01:01:00Z', data: {}, run_id: waiting.run_id, cancelled_by: 'ann@example.com' }]
              : [],
            total: cancelled ? 1 : 0,
          },
        };
      return undefined;
    });
    renderRoutes([{ path: '/logs', element: <HistoryPage /> }], '/logs');
    await userEvent.click(await screen.findByTestId('history-open-3'));
    const row = await screen.findByTestId(`active-run-${waiting.run_id}`);
    expect(within(row).getByTestId(`active-run-status-${waiting.run_id}`)).toHaveTextContent('Waiting until');
    expect(within(row).queryByTestId(`active-run-approvals-${waiting.run_id}`)).not.toBeInTheDocument(); // a delay
    await userEvent.click(within(row).getByTestId(`cancel-run-${waiting.run_id}`));
    expect(calls.some((c) => c.method === 'POST')).toBe(false); // not before the confirm
    await userEvent.click(await screen.findByRole('button', { name: 'Cancel run' }));
    expect(await screen.findByText(CANCEL_ASKED)).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId('active-runs')).not.toBeInTheDocument());
    expect(await screen.findByTestId('cancelled-by-7')).toHaveTextContent('Cancelled by ann@example.com');
    expect(screen.getByTestId('history-run-status-7')).toHaveTextContent('Cancelled');
  }, 30_000);
});
