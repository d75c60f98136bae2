import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../api/models';
import { queryClient } from '../../../api/typed';
import { writeSession } from '../../../lib/session';
import { useSession } from '../../../lib/sessionStore';
import { RequireSession } from '../../../shell/RequireSession';
import { mockFetch, renderRoutes, type FetchCall } from '../../../test/utils';
import { CanvasEditor } from '../../CanvasEditor';
import { webhookApp } from '../../model/fixtures';

/** A catalogue app that needs no account: its configuration loads once an event is chosen. */
const sheetsLike: App = { id: 700, name: 'Open Sheets', image_url: null, status: 'Active', account_count: 0, provider: 'opensheets', app_type: 'api', auth_type: null };

const cfg = (key: string, extra: Record<string, unknown> = {}) => ({
  id: key,
  config_key: key,
  title: key,
  label: key.toUpperCase(),
  key_value_type: 'string',
  type: 'text',
  config_key_required: false,
  sequence: 0,
  options: [],
  dynamic: false,
  depends_on: [],
  ...extra,
});

function backend() {
  return mockFetch((c: FetchCall) => {
    const path = c.url.split('?')[0];
    if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp], total_apps: 1 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [sheetsLike], total_apps: 1 } };
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [], total_apps: 0 } };
    if (path === '/api/v1/apps/700/app_events')
      return { body: { app_events: [{ id: 'add_row', name: 'Add Row', kind: 'action', side: 'right', help: '' }, { id: 'other', name: 'Other', kind: 'action', side: 'right', help: '' }] } };
    if (path === '/api/v1/apps/700/app_events/add_row/event_config/right')
      return {
        body: {
          fetch_fields: true,
          app_event_configurations: [
            cfg('sheet', { sequence: 1, type: 'select', dynamic: true, config_key_required: true }),
            cfg('tab', { sequence: 2, type: 'select', dynamic: true, config_key_required: true }),
            cfg('a'),
            cfg('b'),
            cfg('c'),
            cfg('d'),
            cfg('e'),
          ],
        },
      };
    if (path === '/api/v1/apps/700/app_events/add_row/event_config/right/sheet/details')
      return { body: { config_key: 'sheet', options: [{ id: 's1', name: 'Sales' }] } };
    if (path === '/api/v1/apps/700/app_events/add_row/event_config/right/tab/details')
      return { body: { config_key: 'tab', options: [{ id: 't1', name: 'Q1' }] } };
    if (path === '/api/v1/apps/700/app_events/add_row/event_config/right/tab/fetch-fields')
      return { body: { fields: [cfg('column_x', { label: 'Column X' })] } };
    return undefined;
  });
}

describe('configuration section', () => {
  beforeEach(() => queryClient.clear());

  it('loads fields in sequence, shows 5, Add More Fields, Manage Fields, options per sequence, fetched fields', async () => {
    const calls = backend();
    const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(session);
    useSession.setState({ session });
    renderRoutes([{ path: '/create', element: <RequireSession><CanvasEditor /></RequireSession> }], '/create');
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('add-action'));
    await userEvent.click(await screen.findByTestId('app-tile-opensheets'));
    const node = await screen.findByTestId('node-node-2');

    // Choose the event (antd Select: open it, pick the option).
    fireEvent.mouseDown(within(node).getByTestId('event-select-node-2').querySelector('.ant-select-selector') ?? within(node).getByTestId('event-select-node-2'));
    await userEvent.click(await screen.findByTestId('event-option-add_row'));

    // Sequence 1 is dynamic: its options are fetched right away.
    await waitFor(() => expect(calls.some((c) => c.url.startsWith('/api/v1/apps/700/app_events/add_row/event_config/right/sheet/details'))).toBe(true));
    // Required first, then optional ones up to 5: SHEET, TAB, A, B, C; D and E hidden.
    expect(within(node).getByTestId('config-node-2-sheet')).toBeInTheDocument();
    expect(within(node).getByTestId('config-node-2-c')).toBeInTheDocument();
    expect(within(node).queryByTestId('config-node-2-d')).not.toBeInTheDocument();
    expect(within(node).getByTestId('manage-fields-node-2')).toBeInTheDocument();

    // Choosing sequence 1 loads the options of sequence 2 with prevSequence=1 and the chosen value.
    const sheet = within(node).getByTestId('config-node-2-sheet').querySelector('input')!;
    await userEvent.click(sheet);
    await userEvent.click(await screen.findByText('Sales'));
    expect(sheet).toHaveValue('Sales'); // the option's name is shown; its id (s1) is what the step stores
    await waitFor(() => {
      const call = calls.find((c) => c.url.startsWith('/api/v1/apps/700/app_events/add_row/event_config/right/tab/details'));
      expect(call?.url).toContain('prevSequence=1');
      expect(call?.url).toContain('sheet=s1');
    });
    // The last sequenced field fetches the event's live fields.
    const tab = within(node).getByTestId('config-node-2-tab').querySelector('input')!;
    await userEvent.click(tab);
    await userEvent.click(await screen.findByText('Q1'));
    await waitFor(() => expect(calls.some((c) => c.url.includes('/tab/fetch-fields') && c.url.includes('selectedValue=t1'))).toBe(true));

    // Selects accept free text too.
    await userEvent.clear(sheet);
    await userEvent.type(sheet, 'my-own-id');
    expect(sheet).toHaveValue('my-own-id');

    await userEvent.click(within(node).getByTestId('add-more-fields-node-2'));
    expect(within(node).getByTestId('config-node-2-d')).toBeInTheDocument();
    expect(within(node).getByTestId('config-node-2-column_x')).toBeInTheDocument();

    // Choosing another event clears the configuration.
    fireEvent.mouseDown(within(node).getByTestId('event-select-node-2').querySelector('.ant-select-selector') ?? within(node).getByTestId('event-select-node-2'));
    await userEvent.click(await screen.findByTestId('event-option-other'));
    await waitFor(() => expect(within(node).queryByTestId('config-node-2-sheet')).not.toBeInTheDocument());
  });
});
