import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../../api/typed';
import { writeSession } from '../../../lib/session';
import { useSession } from '../../../lib/sessionStore';
import { RequireSession } from '../../../shell/RequireSession';
import { mockFetch, renderRoutes, type FetchCall } from '../../../test/utils';
import { CanvasEditor } from '../../CanvasEditor';
import { addOn, apiApp, slackApp, webhookApp } from '../../model/fixtures';

type Reply = { status?: number; body: unknown } | undefined;

function backend(extra?: (c: FetchCall, path: string) => Reply) {
  return mockFetch((c) => {
    const path = c.url.split('?')[0];
    const custom = extra?.(c, path);
    if (custom) return custom;
    if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp, slackApp], total_apps: 2 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [], total_apps: 0 } };
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [apiApp], total_apps: 1 } };
    return undefined;
  });
}

function renderEditor() {
  const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
  writeSession(session);
  useSession.setState({ session });
  return renderRoutes([{ path: '/create', element: <RequireSession><CanvasEditor /></RequireSession> }], '/create');
}

const longText = 'x'.repeat(43);
const triggerReply = {
  test_status: 'Success',
  display_message: 'Webhook tested',
  raw_response: { a: '1', b: '2', c: '3', d: '4', long: longText },
  konnect_id: 9,
  konnect_activity_id: 3,
  webhook_url: 'http://h/hooks/t',
};

describe('node cards', () => {
  beforeEach(() => queryClient.clear());

  it('searches the catalogue on the server from 2 characters and grows the page by 20', async () => {
    const calls = backend((_c, path) => (path === '/api/v1/apps/get_triggers' ? { body: { apps: [webhookApp, slackApp], total_apps: 500 } } : undefined));
    renderEditor();
    await screen.findByTestId('app-tile-webhook');
    expect(calls.filter((c) => c.url.startsWith('/api/v1/apps/get_triggers'))[0].url).toContain('page_size=80');
    await userEvent.type(screen.getByTestId('trigger-picker-search'), 's');
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.some((c) => c.url.includes('search_query='))).toBe(false);
    await userEvent.type(screen.getByTestId('trigger-picker-search'), 'l');
    await waitFor(() => expect(calls.some((c) => c.url.includes('search_query=sl'))).toBe(true));
    fireEvent.scroll(screen.getByTestId('app-grid'));
    await waitFor(() => expect(calls.some((c) => c.url.includes('page_size=100'))).toBe(true));
    expect(screen.getByTestId('app-tile-slack')).toHaveTextContent('Slack W...');
  });

  it('a catalogue trigger: name cut to 13, events, the no-accounts warning, no Set Delay on the trigger', async () => {
    backend((_c, path) => {
      if (path === '/api/v1/apps/501/app_events') return { body: { app_events: [{ id: 'new_message', name: 'New Message', kind: 'trigger', side: 'left', help: '' }] } };
      if (path === '/api/v1/apps/501/authorized_app_accounts') return { body: { authorized_app_accounts: [] } };
      return undefined;
    });
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-slack'));
    const node = await screen.findByTestId('node-node-1');
    expect(within(node).getByTestId('node-title-node-1')).toHaveTextContent('Slack Works..');
    expect(within(node).queryByTestId('node-delay-node-1')).not.toBeInTheDocument();
    expect(await within(node).findByTestId('no-accounts-node-1')).toHaveTextContent(
      'Please Manage the app by authorizing the accounts as you have no accounts authorised',
    );
    expect(within(node).getByTestId('status-node-1')).toHaveAttribute('data-status', 'Draft');
  });

  it('tests the trigger through the AND/OR drawer: Please Wait..., the toast, the response panel', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    const calls = backend((_c, path) => (path === '/api/v1/konnects/test_and_review' ? { body: triggerReply } : undefined));
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    expect(screen.queryByTestId('node-delay-node-1')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('node-manage-node-1'));
    expect(await screen.findByText('Webhook is not manageable.')).toBeInTheDocument();

    await userEvent.click(screen.getByTestId('node-test-node-1'));
    const join = await screen.findByTestId('trigger-test-join-node-1');
    expect(within(join).getByRole('radio', { name: 'AND' })).toBeChecked();
    // Hold the reply to see the button while the test runs.
    const fetchSpy = globalThis.fetch;
    globalThis.fetch = (async (...args: Parameters<typeof fetch>) => {
      await gate;
      return fetchSpy(...args);
    }) as typeof fetch;
    await userEvent.click(screen.getByTestId('trigger-test-proceed-node-1'));
    expect(await screen.findByText('Please Wait...')).toBeInTheDocument();
    expect(screen.getByTestId('node-test-node-1')).toBeDisabled();
    await act(async () => release?.());
    expect(await screen.findByText('Webhook tested')).toBeInTheDocument();
    globalThis.fetch = fetchSpy;
    expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success');
    expect(screen.getByTestId('node-test-node-1')).toHaveTextContent('Test & Review');
    expect(screen.getByTestId('webhook-url')).toHaveTextContent('http://h/hooks/t');
    const panel = screen.getByTestId('response-node-1');
    expect(within(panel).getAllByTestId('response-row-node-1')).toHaveLength(3);
    await userEvent.click(within(panel).getByTestId('response-more-node-1'));
    expect(within(panel).getAllByTestId('response-row-node-1')).toHaveLength(5);
    expect(within(panel).getByTestId('response-multiline')).toHaveValue(longText);
    const body = calls.find((c) => c.url === '/api/v1/konnects/test_and_review')!.body as Record<string, unknown>;
    expect(body).toMatchObject({ node_id: 'node-1', konnect_id: null, left_app_id: 1, left_app_event_id: 'catch_hook' });
  });

  it("sends the drawer's AND/OR and the checked labels (keys of the trigger's data) with the trigger's test", async () => {
    const calls = backend((_c, path) =>
      path === '/api/v1/konnects/test_and_review' ? { body: { ...triggerReply, raw_response: { name: 'Ada', email: 'a@x' } } } : undefined,
    );
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('node-test-node-1'));
    expect(await screen.findByTestId('trigger-test-no-labels-node-1')).toBeInTheDocument();
    await userEvent.click(screen.getByTestId('trigger-test-proceed-node-1'));
    await waitFor(() => expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success'));
    const tests = () => calls.filter((c) => c.url === '/api/v1/konnects/test_and_review').map((c) => c.body as Record<string, unknown>);
    expect(tests()[0].trigger_filter).toEqual({ join: 'AND', labels: [] });

    await userEvent.click(screen.getByTestId('node-test-node-1'));
    const labels = await screen.findByTestId('trigger-test-labels-node-1');
    expect(within(labels).getAllByRole('checkbox').map((c) => c.closest('label')?.textContent)).toEqual(['name', 'email']);
    await userEvent.click(within(screen.getByTestId('trigger-test-join-node-1')).getByText('OR'));
    expect(screen.getByText('The sample must have a value for at least one checked label.')).toBeInTheDocument();
    await userEvent.click(within(labels).getByText('email'));
    await userEvent.click(screen.getByTestId('trigger-test-proceed-node-1'));
    await waitFor(() => expect(tests()).toHaveLength(2));
    expect(tests()[1]).toMatchObject({ node_id: 'node-1', konnect_id: 9, trigger_filter: { join: 'OR', labels: ['email'] } });

    // the drawer reopens with the last choice
    await userEvent.click(screen.getByTestId('node-test-node-1'));
    expect(within(await screen.findByTestId('trigger-test-join-node-1')).getByRole('radio', { name: 'OR' })).toBeChecked();
    expect(within(screen.getByTestId('trigger-test-labels-node-1')).getByRole('checkbox', { name: 'email' })).toBeChecked();
  });

  it('a custom-script trigger opens its script-triggers popup and tests again once it closed', async () => {
    const calls = backend((_c, path) =>
      path === '/api/v1/konnects/test_and_review' ? { body: { ...triggerReply, konnect_custom: { script_id: 9 } } } : undefined,
    );
    const popup = { closed: false, focus: () => undefined };
    const open = vi.spyOn(window, 'open').mockReturnValue(popup as unknown as Window);
    try {
      renderEditor();
      await userEvent.click(await screen.findByTestId('app-tile-webhook'));
      await userEvent.click(screen.getByTestId('node-test-node-1'));
      await userEvent.click(await screen.findByTestId('trigger-test-proceed-node-1'));
      expect(await screen.findByTestId('script-open-node-1')).toHaveTextContent('Install the script shown in the popup');
      expect(open).toHaveBeenCalledTimes(1);
      expect(open.mock.calls[0][0]).toMatch(/\/script-triggers\/9$/);
      popup.closed = true;
      await waitFor(() => expect(screen.queryByTestId('script-open-node-1')).not.toBeInTheDocument(), { timeout: 3000 });
      await waitFor(() => expect(calls.filter((c) => c.url === '/api/v1/konnects/test_and_review')).toHaveLength(2));
      expect(open).toHaveBeenCalledTimes(1); // the quiet re-test opens no second popup
    } finally {
      open.mockRestore();
    }
  });

  it('a Scheduler trigger tests without the AND/OR drawer and lists its next runs', async () => {
    const scheduler = addOn('scheduler', 'Scheduler', 31);
    const calls = backend((c, path) => {
      if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp, scheduler], total_apps: 2 } };
      if (c.url === '/api/v1/konnects/test_and_review')
        return {
          body: {
            test_status: 'Success',
            display_message: 'Next runs: 2026-11-27T09:00:00+05:30, 2026-11-28T09:00:00+05:30, 2026-11-29T09:00:00+05:30 (GMT+05:30)',
            raw_response: { scheduled_at: '2026-11-27T03:30:00Z', local_time: '2026-11-27T09:00:00+05:30', timezone: 'GMT+05:30', schedule_type: 'Everyday' },
            konnect_id: 9,
            konnect_activity_id: 3,
          },
        };
      return undefined;
    });
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-scheduler'));
    await userEvent.click(await screen.findByTestId('node-test-node-1'));
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/v1/konnects/test_and_review')).toHaveLength(1));
    expect(screen.queryByTestId('trigger-test-proceed-node-1')).not.toBeInTheDocument();
    expect(screen.queryByText('Test Trigger')).not.toBeInTheDocument();
    const runs = await screen.findByTestId('schedule-next-runs-node-1');
    expect(runs).toHaveTextContent('Next runs (GMT+05:30)');
    expect(Array.from(runs.querySelectorAll('li'), (li) => li.textContent)).toEqual(['2026-11-27 09:00', '2026-11-28 09:00', '2026-11-29 09:00']);
  });

  it('refuses to test an action before its trigger, and offers Set Delay on actions', async () => {
    const calls = backend();
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('add-action'));
    await userEvent.click(await screen.findByTestId('app-tile-api'));
    expect(await screen.findByTestId('node-delay-node-2')).toBeInTheDocument();
    // Never tested: a static 'Not tested' state, no spinner.
    expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Draft');
    expect(screen.getByTestId('status-node-2')).toHaveTextContent('Not tested');
    expect(screen.getByTestId('node-node-2').querySelector('.anticon-loading')).toBeNull();
    await userEvent.click(screen.getByTestId('node-test-node-2'));
    expect(await screen.findByText('Test Your API Call after testing your Triggering app')).toBeInTheDocument();
    expect(calls.some((c) => c.url.includes('test_and_review'))).toBe(false);

    await userEvent.click(screen.getByTestId('node-delay-node-2'));
    expect(await screen.findByText('-- Set Parameters For Delay To Act')).toBeInTheDocument();
  });

  it('a coupon change on a tested card sends it back to Draft; a deleted tested node is deleted on the server and undone', async () => {
    const calls = backend((c, path) => {
      if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [addOn('coupon', 'Coupon', 7)], total_apps: 1 } };
      if (path === '/api/v1/konnects/test_and_review') {
        const action = (c.body as { node_id?: string }).node_id === 'node-2';
        return { body: { ...triggerReply, raw_response: action ? { coupon_code: 'ABCD' } : { a: '1' }, konnect_activity_id: action ? 5 : 3 } };
      }
      if (path === '/api/v1//konnects/delete_activity') return { body: { status: 'SUCCESS', message: 'Test result deleted' } };
      return undefined;
    });
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('node-test-node-1'));
    await userEvent.click(await screen.findByTestId('trigger-test-proceed-node-1'));
    await waitFor(() => expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success'));
    await userEvent.click(screen.getByTestId('add-ons'));
    await userEvent.click(await screen.findByTestId('app-tile-coupon'));
    await userEvent.type(await screen.findByTestId('coupon-expiry-node-2'), '3');
    await userEvent.click(screen.getByTestId('node-test-node-2'));
    await waitFor(() => expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Success'));
    await userEvent.type(screen.getByTestId('coupon-expiry-node-2'), '0');
    await waitFor(() => expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Draft'));

    await userEvent.click(screen.getByTestId('node-test-node-2'));
    await waitFor(() => expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Success'));
    await userEvent.click(screen.getByTestId('node-delete-node-2'));
    await waitFor(() => expect(screen.queryByTestId('node-node-2')).not.toBeInTheDocument());
    const deleted = calls.find((c) => c.url === '/api/v1//konnects/delete_activity')!.body as Record<string, unknown>;
    expect(deleted).toMatchObject({ konnect_id: 9, konnect_activity_id: 5, nodeId: 'node-2' });
    expect((deleted.canvas_json as { apps: unknown[] }).apps).toHaveLength(1);
    await userEvent.click(screen.getByTestId('undo'));
    expect(await screen.findByTestId('node-node-2')).toBeInTheDocument();
  });

  it('keeps the trigger while an action exists', async () => {
    backend();
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('add-action'));
    await userEvent.click(await screen.findByTestId('app-tile-api'));
    expect(screen.getByTestId('node-delete-node-1')).toHaveAttribute('aria-label', 'Trigger cannot be deleted when an action app is present.');
    expect(screen.getByTestId('node-delete-node-2')).toHaveAttribute('aria-label', 'Delete');
    await userEvent.click(await screen.findByTestId('node-delete-node-1'));
    expect(await screen.findByText('Cannot delete Trigger while Action present.')).toBeInTheDocument();
    expect(screen.getByTestId('node-node-1')).toBeInTheDocument();
  });

  it('deselecting a lone trigger empties the canvas and reopens the app search', async () => {
    backend();
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    fireEvent.click(screen.getByTestId('node-title-node-1'));
    await userEvent.click(await screen.findByTestId('node-deselect-node-1'));
    await waitFor(() => expect(screen.queryByTestId('node-node-1')).not.toBeInTheDocument());
    expect(await screen.findByText('Choose Trigger')).toBeInTheDocument();
  });

  it('Capture Response tests the trigger, then polls every 7 s until the reply is not WAITING', async () => {
    let captures = 0;
    const calls = backend((_c, path) => {
      if (path === '/api/v1/konnects/test_and_review') return { body: { ...triggerReply, raw_response: {} } };
      if (path === '/api/v1/konnect_webhooks/capture_webhook_response/9') {
        captures += 1;
        const waiting = captures < 2;
        return {
          body: {
            message: waiting ? 'WAITING' : 'SUCCESS',
            test_status: waiting ? 'WAITING' : 'Success',
            display_message: waiting ? 'Waiting' : 'Webhook response captured',
            raw_response: waiting ? null : { name: 'Ada' },
            konnect_id: 9,
            konnect_activity_id: waiting ? null : 4,
            webhook_url: 'http://h/hooks/t',
          },
        };
      }
      return undefined;
    });
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    const realSetTimeout = window.setTimeout;
    const delays: number[] = [];
    window.setTimeout = ((fn: () => void, ms?: number) => {
      if (ms === 7000) {
        delays.push(ms);
        return realSetTimeout(fn, 0);
      }
      return realSetTimeout(fn, ms);
    }) as typeof window.setTimeout;
    try {
      await userEvent.click(screen.getByTestId('capture-node-1'));
      expect(await screen.findByText('Webhook response captured')).toBeInTheDocument();
    } finally {
      window.setTimeout = realSetTimeout;
    }
    expect(delays).toEqual([7000]);
    expect(captures).toBe(2);
    expect(calls.filter((c) => c.url.includes('test_and_review'))).toHaveLength(1);
    expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success');
    expect(screen.getByTestId('response-node-1')).toHaveTextContent('name');
  });
});
