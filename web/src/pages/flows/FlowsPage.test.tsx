import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderRoutes, type FetchCall } from '../../test/utils';
import { FlowsPage, moveMessage } from './FlowsPage';

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
    folder_id: null,
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
    trigger_kind: 'webhook',
    folder_id: null,
  },
];
const folders = [
  { id: 7, name: 'Sales', konnect_count: 0 },
  { id: 8, name: 'Ops', konnect_count: 2 },
];

/** An option of an open antd Select (the sidebar also shows folder names). */
async function findOption(label: string): Promise<HTMLElement> {
  const all = await screen.findAllByTitle(label);
  const option = all.find((el) => el.classList.contains('ant-select-item-option'));
  if (!option) throw new Error(`no option ${label}`);
  return option;
}

type Reply = { status?: number; body: unknown } | undefined;

/** A fake api: folders, the flow list, and whatever `extra` answers. */
function fakeApi(extra: (c: FetchCall) => Reply = () => undefined, list = konnects) {
  return mockFetch((c) => {
    const more = extra(c);
    if (more) return more;
    if (c.url === '/api/v1/folders/list') return { body: { status: 'SUCCESS', message: 'SUCCESS', folders } };
    if (c.url.startsWith('/api/v1/konnects?')) return { body: { konnects: list, total_konnects: list.length } };
    return undefined;
  });
}

const renderFlows = (path = '/flows/home') =>
  renderRoutes(
    [
      { path: '/flows/:index', element: <FlowsPage /> },
      { path: '/create/:id', element: <div data-testid="editor" /> },
      { path: '/create', element: <div data-testid="editor-new" /> },
    ],
    path,
  );

describe('FlowsPage', () => {
  beforeEach(() => queryClient.clear());

  it('lists the flows of Home with labels, publish status and the webhook URL of published flows', async () => {
    const calls = fakeApi();
    renderFlows();
    const draftRow = await screen.findByTestId('flow-row-1');
    expect(draftRow).toHaveTextContent('Webhook-API Call');
    expect(screen.getByTestId('flow-status-1')).toHaveTextContent('Unpublished');
    expect(screen.queryByTestId('flow-webhook-url-1')).not.toBeInTheDocument();
    expect(screen.getByTestId('flow-row-2')).toHaveTextContent('Relay');
    expect(screen.getByTestId('flow-status-2')).toHaveTextContent('Published');
    expect(screen.getByTestId('flow-webhook-url-2')).toHaveTextContent('http://127.0.0.1:8080/hooks/published');
    expect(screen.getByText('Bottom of the Page')).toBeInTheDocument();
    expect(calls.find((c) => c.url.startsWith('/api/v1/konnects'))?.url).toBe(
      '/api/v1/konnects?page_size=20&page_index=1&folder=home',
    );
    const sidebar = screen.getByTestId('folder-sidebar');
    expect(within(sidebar).getByText('Home')).toBeInTheDocument();
    expect(await within(sidebar).findByText('Sales')).toBeInTheDocument();
  });

  it('keeps every row\'s actions on screen and lets the run counts wrap in a narrow table', async () => {
    fakeApi();
    renderFlows();
    const edit = await screen.findByTestId('flow-edit-2');
    // The Actions column is fixed to the right edge: a wide row scrolls under it (a flow with every
    // kind of run at 1440 px pushed Edit, Logs and Delete off screen).
    expect(edit.closest('td')?.className).toMatch(/ant-table-cell-fix-(right|end)/);
    expect(screen.getByTestId('flow-counts-2')).toHaveStyle({ flexWrap: 'wrap' });
  });

  it('shows the empty sidebar text and the unknown-folder text', async () => {
    mockFetch((c) => {
      if (c.url === '/api/v1/folders/list') return { body: { status: 'SUCCESS', message: 'SUCCESS', folders: [] } };
      if (c.url.startsWith('/api/v1/konnects?')) return { status: 404, body: { status: 'FAILURE', message: "This folder does'nt exist." } };
      return undefined;
    });
    renderFlows('/flows/99');
    expect(await screen.findByText('No folders available')).toBeInTheDocument();
    expect(await screen.findByText("This folder does'nt exist.")).toBeInTheDocument();
  });

  it('searches on the server only from 2 characters', async () => {
    const calls = fakeApi(undefined, []);
    renderFlows();
    expect(await screen.findByText('No Flow Found')).toBeInTheDocument();
    await userEvent.type(screen.getByPlaceholderText('Search in Flows'), 'r');
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.every((c) => !c.url.includes('search_query'))).toBe(true);
    await userEvent.type(screen.getByPlaceholderText('Search in Flows'), 'e');
    await waitFor(() => expect(calls.some((c) => c.url.includes('search_query=re'))).toBe(true));
  });

  it('adds a folder, and renames only when the name changed', async () => {
    const calls = fakeApi((c) => {
      if (c.url === '/api/v1/folders/add')
        return { body: { status: 'SUCCESS', message: 'Folder created successfully', folder: { id: 9, name: 'New', konnect_count: 0 } } };
      if (c.url === '/api/v1/folders/7/rename')
        return { body: { status: 'SUCCESS', message: 'Folder renamed successfully', folder: { id: 7, name: 'Leads', konnect_count: 0 } } };
      return undefined;
    });
    renderFlows();
    await userEvent.click(await screen.findByTestId('folder-add'));
    // An empty name just closes the popover.
    await userEvent.click(await screen.findByTestId('folder-add-submit'));
    expect(calls.some((c) => c.url === '/api/v1/folders/add')).toBe(false);
    await userEvent.click(screen.getByTestId('folder-add'));
    await userEvent.type(await screen.findByPlaceholderText('Name of the Folder'), 'New');
    await userEvent.click(screen.getByTestId('folder-add-submit'));
    await waitFor(() => expect(calls.find((c) => c.url === '/api/v1/folders/add')?.body).toEqual({ folder_name: 'New' }));
    expect(await screen.findByText('Folder created successfully')).toBeInTheDocument();

    await userEvent.click(await screen.findByTestId('folder-rename-7'));
    await userEvent.click(await screen.findByTestId('folder-rename-7-submit'));
    expect(calls.some((c) => c.url.endsWith('/rename'))).toBe(false);
    await userEvent.click(screen.getByTestId('folder-rename-7'));
    const input = await screen.findByTestId('folder-rename-7-input');
    await userEvent.clear(input);
    await userEvent.type(input, 'Leads');
    await userEvent.click(screen.getByTestId('folder-rename-7-submit'));
    await waitFor(() => expect(calls.find((c) => c.url.endsWith('/rename'))).toMatchObject({ method: 'PUT', body: { folder_name: 'Leads' } }));
  });

  it('moves checked flows in bulk with the spec texts', async () => {
    let moved = false;
    const calls = fakeApi((c) => {
      if (c.url === '/api/v1/folders/8/assign') {
        moved = true;
        return { body: { status: 'SUCCESS', message: 'Flows moved successfully', folder_id: 8, konnects: [1, 2] } };
      }
      if (moved && c.url.startsWith('/api/v1/konnects?')) return { body: { konnects: [], total_konnects: 0 } };
      return undefined;
    });
    renderFlows();
    await screen.findByTestId('flow-row-1');
    await userEvent.click(screen.getByTestId('move-flows'));
    expect(await screen.findByText('No flows selected')).toBeInTheDocument();
    await userEvent.click(within(screen.getByTestId('flow-row-1')).getByRole('checkbox'));
    await userEvent.click(within(screen.getByTestId('flow-row-2')).getByRole('checkbox'));
    await userEvent.click(within(screen.getByTestId('move-target')).getByRole('combobox'));
    await userEvent.click(await findOption('Ops'));
    await userEvent.click(screen.getByTestId('move-flows'));
    await waitFor(() => expect(calls.find((c) => c.url === '/api/v1/folders/8/assign')?.body).toEqual({ konnects: '1,2' }));
    expect(await screen.findByText('Flows moved successfully')).toBeInTheDocument();
    // Moved flows leave the list.
    await waitFor(() => expect(screen.queryByTestId('flow-row-1')).not.toBeInTheDocument());
    expect(moveMessage(1)).toBe('Flow moved successfully');
  });

  it('reports a failed move with the server message', async () => {
    fakeApi((c) =>
      c.url === '/api/v1/folders/7/assign' ? { status: 404, body: { status: 'FAILURE', message: 'Konnect not found: 1' } } : undefined,
    );
    renderFlows();
    await userEvent.click(within(await screen.findByTestId('flow-row-1')).getByRole('checkbox'));
    await userEvent.click(within(screen.getByTestId('move-target')).getByRole('combobox'));
    await userEvent.click(await findOption('Sales'));
    await userEvent.click(screen.getByTestId('move-flows'));
    expect(await screen.findByText('Failed to move flow(s): Konnect not found: 1')).toBeInTheDocument();
  });

  it('switches the publish status and deletes a flow', async () => {
    const calls = fakeApi((c) => {
      if (c.url === '/api/v1/konnects/1/update_status')
        return { body: { status: 'SUCCESS', message: 'SUCCESS', details: 'Flow published', konnect_id: 1, konnect_status: 'Published' } };
      if (c.url === '/api/v1/konnects/2/update_status') return { status: 503, body: { message: 'Could not stop the konnect' } };
      return undefined;
    });
    renderFlows();
    await userEvent.click(await screen.findByTestId('flow-switch-1'));
    await waitFor(() => expect(calls.find((c) => c.url === '/api/v1/konnects/1/update_status')?.body).toEqual({ status: 'Published' }));
    expect(await screen.findByText('Flow published')).toBeInTheDocument();
    await userEvent.click(screen.getByTestId('flow-delete-2'));
    await userEvent.click(await screen.findByTestId('flow-delete-ok-2'));
    expect(await screen.findByText('Cannot Delete this Flow')).toBeInTheDocument();
  });

  it('opens the task logs of a flow with details and tasks', async () => {
    fakeApi((c) => {
      if (c.url.includes('task_log_type=SUCCESS'))
        return {
          body: {
            task_logs: [{ id: 31, task_date: '2026-11-21T10:00:00Z', status: 'SUCCESS', konnect_id: 2, data: { request: { email: 'a@b.c' } }, revision: 3 }],
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
    expect(await screen.findByTestId('tasklog-revision-31')).toHaveTextContent('rev 3'); // the revision that ran
    await userEvent.click(await screen.findByTestId('tasklog-item-31'));
    const details = await screen.findByTestId('tasklog-details');
    expect(within(details).getByTestId('run-revision')).toHaveTextContent('3');
    // The run's data and each step as key-value rows; the JSON on demand.
    const request = await within(details).findByTestId('run-data-request');
    expect(within(request).getByText('email')).toBeInTheDocument();
    expect(within(request).getByText('a@b.c')).toBeInTheDocument();
    expect(details).not.toHaveTextContent('"email": "a@b.c"');
    expect(await within(details).findByText('API Call')).toBeInTheDocument();
    expect(within(details).getByTestId('task-status-7')).toHaveTextContent('Success');
    expect(details).not.toHaveTextContent('"status_code": 200');
    await userEvent.click(within(details).getByTestId('task-json-7-toggle'));
    expect(within(details).getByTestId('task-json-7')).toHaveTextContent('"status_code": 200');
    await userEvent.click(screen.getByRole('tab', { name: 'Error' }));
    expect(await screen.findByText('No Task Logs Found')).toBeInTheDocument();
  });

  it('replays a failed run from its task details', async () => {
    const calls = fakeApi((c) => {
      if (c.url.includes('task_log_type=ERROR'))
        return {
          body: {
            task_logs: [{ id: 33, task_date: '2026-11-21T10:00:00Z', status: 'ERROR', konnect_id: 2, data: { 'node-1': { a: 1 } }, run_id: 'abc', attempts: 2 }],
            total: 1,
          },
        };
      if (c.url.includes('task_log_type=SUCCESS')) return { body: { task_logs: [], total: 0 } };
      if (c.url === '/api/v1/task_logs/33/tasks') return { body: { tasks: [] } };
      if (c.url === '/api/v1/task_logs/33/replay') return { status: 409, body: { message: 'Publish the flow again to replay its runs' } };
      return undefined;
    });
    renderFlows();
    await userEvent.click(await screen.findByTestId('flow-logs-2'));
    await userEvent.click(screen.getByRole('tab', { name: 'Error' }));
    await userEvent.click(await screen.findByTestId('tasklog-item-33'));
    const details = await screen.findByTestId('tasklog-details');
    expect(within(details).getByTestId('run-facts')).toHaveTextContent('Attempts2');
    await userEvent.click(within(details).getByTestId('replay-33'));
    expect(await screen.findByText('Publish the flow again to replay its runs')).toBeInTheDocument();
    expect(calls.filter((c) => c.url === '/api/v1/task_logs/33/replay').map((c) => c.method)).toEqual(['POST']);
  });

  it('shows the empty texts of the task log modal', async () => {
    fakeApi((c) => {
      if (c.url.includes('task_log_type=SUCCESS'))
        return { body: { task_logs: [{ id: 40, task_date: '2026-11-21T10:00:00Z', status: 'SUCCESS', konnect_id: 2, data: {} }], total: 1 } };
      if (c.url === '/api/v1/task_logs/40/tasks') return { body: { tasks: [] } };
      return undefined;
    });
    renderFlows();
    await userEvent.click(await screen.findByTestId('flow-logs-2'));
    await userEvent.click(await screen.findByTestId('tasklog-item-40'));
    const details = await screen.findByTestId('tasklog-details');
    expect(within(details).getByText('No Label Found')).toBeInTheDocument();
    expect(await within(details).findByText('No Task Found')).toBeInTheDocument();
  });

  it('goes to the editor from Edit', async () => {
    fakeApi();
    const { router } = renderFlows();
    await userEvent.click(await screen.findByTestId('flow-edit-2'));
    expect(router.state.location.pathname).toBe('/create/2');
  });
});
