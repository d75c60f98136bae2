import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import dayjs from 'dayjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderRoutes } from '../../test/utils';
import { REPLAY_ALREADY, REPLAY_DONE } from '../flows/ReplayButton';
import { HistoryPage, historyQuery } from './HistoryPage';

const flow = (id: number) => ({
  id,
  konnect_name: `Flow ${id}`,
  status: 'Published',
  created_at: '2026-11-21T10:00:00Z',
  success_task_count: id,
  error_task_count: 1,
  left_app: { name: 'Webhook' },
  right_apps: [{ app_name: 'API Call' }],
  webhook_url: 'http://hooks/x',
  folder_id: null,
});

const renderHistory = () => renderRoutes([{ path: '/logs', element: <HistoryPage /> }], '/logs');

describe('HistoryPage', () => {
  beforeEach(() => queryClient.clear());

  it('builds the query: search from 2 characters, dates as days, status, pages of 30', () => {
    expect(historyQuery({ search: 'a', start: null, end: null, status: null }, 1)).toEqual({ page_size: 30, page_index: 1 });
    expect(
      historyQuery({ search: ' ab ', start: dayjs('2024-05-01'), end: dayjs('2024-05-31'), status: 'ERROR' }, 2),
    ).toEqual({ page_size: 60, page_index: 1, search_query: 'ab', start_date: '2024-05-01', end_date: '2024-05-31', status: 'ERROR' });
  });

  it('lists flows with counts, pages by 30, ends with the spec text and opens the drawer', async () => {
    const all = Array.from({ length: 45 }, (_, i) => flow(i + 1));
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) {
        const size = Number(new URL(c.url, 'http://x').searchParams.get('page_size'));
        return { body: { konnects: all.slice(0, size), total_konnects: all.length } };
      }
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return { body: { task_logs: [{ id: 501, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T11:00:00Z', data: {} }], total: 1 } };
      return undefined;
    });
    renderHistory();
    expect(await screen.findByTestId('history-row-30')).toBeInTheDocument();
    expect(screen.queryByTestId('history-row-31')).not.toBeInTheDocument();
    for (const col of ['Name', 'Creation Date', 'Status', 'Action']) expect(screen.getAllByText(col).length).toBeGreaterThan(0);
    expect(within(screen.getByTestId('history-status-3')).getByText('3 success')).toBeInTheDocument();
    await userEvent.click(screen.getByTestId('history-more'));
    expect(await screen.findByTestId('history-row-45')).toBeInTheDocument();
    expect(screen.getByText('End of List - No More Flows to Load')).toBeInTheDocument();
    expect(calls.map((c) => c.url)).toContain('/api/v1/task_logs/konnects?page_size=60&page_index=1');

    await userEvent.click(screen.getByTestId('history-open-3'));
    const drawer = await screen.findByTestId('history-drawer');
    expect(drawer).toHaveTextContent('Flow 3');
    expect(await within(drawer).findByTestId('history-log-501')).toHaveTextContent('Error');
  }, 45_000); // 45 rows, each with its run counts as tags: slow in jsdom on a loaded machine

  it('replays a failed run from the drawer and shows attempts', async () => {
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow(3)], total_konnects: 1 } };
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return {
          body: {
            task_logs: [
              { id: 501, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T11:00:00Z', data: {}, run_id: 'r1', attempts: 3, replay_of: null },
              { id: 502, konnect_id: 3, status: 'SUCCESS', task_date: '2026-11-21T12:00:00Z', data: {}, run_id: 'r2', attempts: 1, replay_of: 'r0', revision: 4 },
            ],
            total: 2,
          },
        };
      if (c.url === '/api/v1/task_logs/501/replay' && c.method === 'POST')
        return { status: 202, body: { message: 'The run was replayed', run_id: 'r9', replay_of: 'r1' } };
      return undefined;
    });
    renderHistory();
    await userEvent.click(await screen.findByTestId('history-open-3'));
    const failed = await screen.findByTestId('history-log-501');
    expect(failed).toHaveTextContent('3 attempts');
    const replayed = screen.getByTestId('history-log-502');
    expect(replayed).toHaveTextContent('Replay');
    expect(within(replayed).queryByTestId('replay-502')).not.toBeInTheDocument(); // only failed runs
    expect(within(replayed).getByTestId('history-revision-502')).toHaveTextContent('rev 4'); // the revision that ran
    expect(within(failed).queryByTestId('history-revision-501')).not.toBeInTheDocument();
    await userEvent.click(within(failed).getByTestId('replay-501'));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/task_logs/501/replay')).toBe(true));
    expect(await screen.findByText(REPLAY_DONE)).toBeInTheDocument();
  });

  it("unfolds a run's steps in the drawer: app name, status in words, duration, rows, JSON on demand", async () => {
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow(3)], total_konnects: 1 } };
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return { body: { task_logs: [{ id: 501, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T11:00:00Z', data: {} }], total: 1 } };
      if (c.url === '/api/v1/task_logs/501/tasks')
        return {
          body: {
            tasks: [
              {
                id: 71,
                step_id: 'node-2',
                app_name: 'API Call',
                app_id: 2,
                provider: 'api',
                status: 'ERROR',
                started_at: '2026-11-21T10:59:58Z',
                task_date: '2026-11-21T11:00:00Z',
                duration_ms: 2000,
                data: { input: { url: 'https://api.example.com/orders' }, output: null, error: 'HTTP 500' },
              },
            ],
          },
        };
      return undefined;
    });
    renderHistory();
    await userEvent.click(await screen.findByTestId('history-open-3'));
    const run = await screen.findByTestId('history-log-501');
    expect(within(run).queryByTestId('history-steps-501')).not.toBeInTheDocument();
    expect(calls.some((c) => c.url.endsWith('/tasks'))).toBe(false); // fetched when unfolded
    await userEvent.click(within(run).getByTestId('history-steps-toggle-501'));
    const step = await within(run).findByTestId('task-71');
    expect(within(step).getByTestId('task-app-71')).toHaveTextContent('API Call');
    expect(within(step).getByTestId('task-status-71')).toHaveTextContent('Error');
    expect(within(step).getByTestId('task-duration-71')).toHaveTextContent('2 s');
    expect(within(step).getByText('https://api.example.com/orders')).toBeInTheDocument();
    expect(within(step).getByTestId('task-error-71')).toHaveTextContent('HTTP 500');
    await userEvent.click(within(step).getByTestId('task-json-71-toggle'));
    expect(within(step).getByTestId('task-json-71')).toHaveTextContent('"url": "https://api.example.com/orders"');
  });

  it('links a replay to its origin and asks for a new replay only explicitly', async () => {
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow(3)], total_konnects: 1 } };
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return {
          body: {
            task_logs: [
              { id: 601, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T11:00:00Z', data: {}, run_id: 'origin01', attempts: 1, replay_of: null, replayed_as: 'replay01' },
              { id: 602, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T12:00:00Z', data: {}, run_id: 'replay01', attempts: 1, replay_of: 'origin01', replayed_as: null },
              { id: 603, konnect_id: 3, status: 'ERROR', task_date: '2026-11-21T13:00:00Z', data: {}, run_id: 'plain001', attempts: 1, replay_of: null, replayed_as: null },
            ],
            total: 3,
          },
        };
      if (c.url.startsWith('/api/v1/task_logs/601/replay'))
        return { status: 202, body: { message: 'The run was replayed', run_id: 'replay02', replay_of: 'origin01', already_replayed: false } };
      if (c.url.startsWith('/api/v1/task_logs/603/replay'))
        return { status: 200, body: { message: 'already', run_id: 'replay03', replay_of: 'plain001', already_replayed: true } };
      return undefined;
    });
    renderHistory();
    await userEvent.click(await screen.findByTestId('history-open-3'));
    expect(await screen.findByTestId('replayed-as-601')).toHaveTextContent('Replayed as replay01');
    expect(screen.getByTestId('replay-of-602')).toHaveTextContent('Replay of origin01');
    expect(screen.getByTestId('replay-601')).toHaveTextContent('Replay again');
    expect(screen.getByTestId('replay-602')).toHaveTextContent('Replay again');
    expect(screen.getByTestId('replay-603')).toHaveTextContent(/^Replay$/);
    await userEvent.click(screen.getByTestId('replay-601'));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/task_logs/601/replay?again=true')).toBe(true));
    await userEvent.click(screen.getByTestId('replay-603'));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.url === '/api/v1/task_logs/603/replay')).toBe(true));
    expect(await screen.findByText(REPLAY_ALREADY)).toBeInTheDocument();
  });

  it('links a called run to its caller and a caller to the runs it called (Call a Flow)', async () => {
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow(3)], total_konnects: 1 } };
      if (c.url.startsWith('/api/v1/task_logs/logs?konnect_id=3'))
        return {
          body: {
            task_logs: [
              {
                id: 701, konnect_id: 3, status: 'SUCCESS', task_date: '2026-11-21T11:00:00Z', data: {}, run_id: 'called01', attempts: 1,
                called_by: { konnect_id: 8, konnect_name: 'Orders', run_id: 'caller0123456789', step_id: 'node-2' }, calls: [],
              },
              {
                id: 702, konnect_id: 3, status: 'SUCCESS', task_date: '2026-11-21T12:00:00Z', data: {}, run_id: 'caller02', attempts: 1,
                called_by: null, calls: [{ step_id: 'node-3', run_id: 'child9876543210', flow_id: 9, flow_name: 'Refund' }],
              },
            ],
            total: 2,
          },
        };
      return undefined;
    });
    renderHistory();
    await userEvent.click(await screen.findByTestId('history-open-3'));
    const caller = await screen.findByTestId('called-by-701');
    expect(caller).toHaveTextContent('Called by Orders · run caller01');
    expect(within(caller).getByRole('link', { name: 'Orders' })).toHaveAttribute('href', '/create/8');
    const called = screen.getByTestId('calls-702-child9876543210');
    expect(called).toHaveTextContent('Called Refund · run child987');
    expect(within(called).getByRole('link', { name: 'Refund' })).toHaveAttribute('href', '/create/9');
    expect(screen.queryByTestId('called-by-702')).toBeNull();
  });

  it('filters with Go (search uses search_konnects) and Clear resets', async () => {
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/task_logs/search_konnects?')) return { body: { konnects: [flow(9)], total_konnects: 1 } };
      if (c.url.startsWith('/api/v1/task_logs/konnects?')) return { body: { konnects: [flow(1), flow(2)], total_konnects: 2 } };
      return undefined;
    });
    renderHistory();
    await screen.findByTestId('history-row-1');
    await userEvent.type(screen.getByPlaceholderText('Search in Name'), 'fl%');
    fireEvent.mouseDown(within(screen.getByTestId('history-status')).getByRole('combobox'));
    const option = (await screen.findAllByTitle('Error')).find((el) => el.classList.contains('ant-select-item-option'));
    await userEvent.click(option!);
    await userEvent.click(screen.getByTestId('history-go'));
    expect(await screen.findByTestId('history-row-9')).toBeInTheDocument();
    const searched = calls.find((c) => c.url.startsWith('/api/v1/task_logs/search_konnects'))!;
    expect(new URL(searched.url, 'http://x').searchParams.get('search_query')).toBe('fl%');
    expect(new URL(searched.url, 'http://x').searchParams.get('status')).toBe('ERROR');
    await userEvent.click(screen.getByTestId('history-clear'));
    expect(await screen.findByTestId('history-row-2')).toBeInTheDocument();
    expect(screen.getByPlaceholderText('Search in Name')).toHaveValue('');
  });

  it('shows an empty list and no further pages when loading fails', async () => {
    mockFetch(() => ({ status: 500, body: { message: 'down' } }));
    renderHistory();
    expect(await screen.findByText('No Flow Found')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByTestId('history-more')).not.toBeInTheDocument());
    expect(screen.queryByText('End of List - No More Flows to Load')).not.toBeInTheDocument();
  });
});
