import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderRoutes } from '../../test/utils';
import { FlowsPage } from './FlowsPage';

const konnects = [
  {
    id: 1,
    konnect_name: '',
    status: 'Draft',
    created_at: '2026-11-20T10:00:00Z',
    success_task_count: 0,
    error_task_count: 0,
    left_app: { name: 'Webhook' },
    right_apps: [{ app_name: 'API Call' }],
    webhook_url: 'http://127.0.0.1:8080/hooks/draft',
  },
  {
    id: 2,
    konnect_name: 'Relay',
    status: 'Published',
    created_at: '2026-11-21T10:00:00Z',
    success_task_count: 1,
    error_task_count: 0,
    left_app: { name: 'Webhook' },
    right_apps: [{ app_name: 'API Call' }],
    webhook_url: 'http://127.0.0.1:8080/hooks/published',
  },
];

const renderFlows = () =>
  renderRoutes(
    [
      { path: '/flows/:index', element: <FlowsPage /> },
      { path: '/create/:id', element: <div data-testid="editor" /> },
      { path: '/create', element: <div data-testid="editor-new" /> },
    ],
    '/flows/home',
  );

describe('FlowsPage', () => {
  it('lists flows with labels, publish status and the webhook URL of published flows', async () => {
    const calls = mockFetch((c) => (c.url.startsWith('/api/v1/konnects?') ? { body: { konnects, total_konnects: 2 } } : undefined));
    renderFlows();
    const draftRow = await screen.findByTestId('flow-row-1');
    expect(draftRow).toHaveTextContent('Webhook-API Call');
    expect(screen.getByTestId('flow-status-1')).toHaveTextContent('Unpublished');
    expect(screen.queryByTestId('flow-webhook-url-1')).not.toBeInTheDocument();
    expect(screen.getByTestId('flow-row-2')).toHaveTextContent('Relay');
    expect(screen.getByTestId('flow-status-2')).toHaveTextContent('Published');
    expect(screen.getByTestId('flow-webhook-url-2')).toHaveTextContent('http://127.0.0.1:8080/hooks/published');
    expect(screen.getByText('Bottom of the Page')).toBeInTheDocument();
    expect(calls[0].url).toBe('/api/v1/konnects?page_size=20&page_index=1');
  });

  it('searches on the server only from 2 characters', async () => {
    const calls = mockFetch(() => ({ body: { konnects: [], total_konnects: 0 } }));
    renderFlows();
    expect(await screen.findByText('No Flow Found')).toBeInTheDocument();
    await userEvent.type(screen.getByPlaceholderText('Search in Flows'), 'r');
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.every((c) => !c.url.includes('search_query'))).toBe(true);
    await userEvent.type(screen.getByPlaceholderText('Search in Flows'), 'e');
    await waitFor(() => expect(calls.some((c) => c.url.includes('search_query=re'))).toBe(true));
  });

  it('opens the task logs of a flow with details and tasks', async () => {
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/konnects?')) return { body: { konnects, total_konnects: 2 } };
      if (c.url.includes('task_log_type=SUCCESS'))
        return {
          body: {
            task_logs: [{ id: 31, task_date: '2026-11-21T10:00:00Z', status: 'SUCCESS', konnect_id: 2, data: { request: { email: 'a@b.c' } } }],
            total: 1,
          },
        };
      if (c.url.includes('task_log_type=ERROR')) return { body: { task_logs: [], total: 0 } };
      if (c.url === '/api/v1/task_logs/31/tasks')
        return { body: { tasks: [{ id: 7, task_date: '2026-11-21T10:00:01Z', step_id: 'node-2', app_name: 'API Call', status: 'SUCCESS', data: { status_code: 200 } }] } };
      return undefined;
    });
    renderFlows();
    await userEvent.click(await screen.findByTestId('flow-logs-2'));
    await userEvent.click(await screen.findByTestId('tasklog-item-31'));
    const details = await screen.findByTestId('tasklog-details');
    expect(details).toHaveTextContent('request');
    expect(details).toHaveTextContent('"email": "a@b.c"');
    expect(await within(details).findByText('API Call')).toBeInTheDocument();
    expect(details).toHaveTextContent('"status_code": 200');
    await userEvent.click(screen.getByRole('tab', { name: 'Error' }));
    expect(await screen.findByText('No Task Logs Found')).toBeInTheDocument();
  });

  it('goes to the editor from Edit', async () => {
    mockFetch(() => ({ body: { konnects, total_konnects: 2 } }));
    const { router } = renderFlows();
    await userEvent.click(await screen.findByTestId('flow-edit-2'));
    expect(router.state.location.pathname).toBe('/create/2');
  });
});
