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

/** The MCP Server app (catalogue/apps/mcp_server.yaml): an account, then the tool, then its arguments. */
const mcpApp: App = { id: 25, name: 'MCP Server', image_url: null, status: 'Active', account_count: 1, provider: 'mcp_server', app_type: 'api', auth_type: 'Token' };
const base = '/api/v1/apps/25/app_events/call_tool/event_config/right';

const field = (key: string, extra: Record<string, unknown> = {}) => ({
  id: key,
  config_key: key,
  title: key,
  label: key,
  key_value_type: 'string',
  type: 'text',
  config_key_required: false,
  sequence: 0,
  options: [],
  dynamic: false,
  depends_on: [],
  help: '',
  ...extra,
});

/** The arguments the api lists for each tool (from its input JSON Schema). */
const argumentsOf: Record<string, unknown[]> = {
  weather: [
    field('arg.city', { label: 'City', config_key_required: true, help: 'The city to forecast' }),
    field('arg.unit', { label: 'Unit', type: 'select', options: [{ id: 'C', name: 'C' }, { id: 'F', name: 'F' }] }),
  ],
  add: [field('arg.a', { label: 'A', key_value_type: 'integer', config_key_required: true })],
};

function backend() {
  return mockFetch((c: FetchCall) => {
    const path = c.url.split('?')[0];
    if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp], total_apps: 1 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [mcpApp], total_apps: 1 } };
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [], total_apps: 0 } };
    if (path === '/api/v1/apps/25/app_events') return { body: { app_events: [{ id: 'call_tool', name: 'MCP Tool', kind: 'action', side: 'right', help: '' }] } };
    if (path === '/api/v1/apps/25/authorized_app_accounts')
      return { body: { authorized_app_accounts: [{ id: 41, name: 'https://tools.example/mcp', created_at: '2026-11-01T00:00:00Z' }] } };
    if (path === base)
      return {
        body: {
          fetch_fields: true,
          app_event_configurations: [
            field('tool', { label: 'Tool', sequence: 1, type: 'select', dynamic: true, config_key_required: true, help: 'The tools the server lists' }),
            field('timeout', { label: 'Timeout (seconds)', key_value_type: 'integer', default: 30 }),
          ],
        },
      };
    if (path === `${base}/tool/details`)
      return { body: { config_key: 'tool', options: [{ id: 'weather', name: 'weather — The forecast' }, { id: 'add', name: 'add — Add two numbers' }] } };
    if (path === `${base}/tool/fetch-fields`) {
      const chosen = new URL(c.url, 'http://x').searchParams.get('selectedValue') ?? '';
      return { body: { fields: argumentsOf[chosen] ?? [] } };
    }
    return undefined;
  });
}

describe('the MCP tool card', () => {
  beforeEach(() => queryClient.clear());

  it('lists the tools through the account, shows the chosen tool’s arguments, and replaces them when the tool changes', async () => {
    const calls = backend();
    const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(session);
    useSession.setState({ session });
    renderRoutes(
      [
        {
          path: '/create',
          element: (
            <RequireSession>
              <CanvasEditor />
            </RequireSession>
          ),
        },
      ],
      '/create',
    );
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('add-action'));
    await userEvent.click(await screen.findByTestId('app-tile-mcp_server'));
    const node = await screen.findByTestId('node-node-2');

    fireEvent.mouseDown(within(node).getByTestId('event-select-node-2').querySelector('.ant-select-selector') ?? within(node).getByTestId('event-select-node-2'));
    await userEvent.click(await screen.findByTestId('event-option-call_tool'));
    // The configuration waits for the account.
    expect(calls.some((c) => c.url.startsWith(base))).toBe(false);
    fireEvent.mouseDown(within(node).getByTestId('account-select-node-2').querySelector('.ant-select-selector') ?? within(node).getByTestId('account-select-node-2'));
    await userEvent.click(await screen.findByTestId('account-option-41'));

    // The tool is listed from the server, through the account.
    await waitFor(() => {
      const listed = calls.find((c) => c.url.startsWith(`${base}/tool/details`));
      expect(listed?.url).toContain('app_account_id=41');
    });
    expect(within(node).getByTestId('config-node-2-tool-help')).toHaveTextContent('The tools the server lists');
    const tool = within(node).getByTestId('config-node-2-tool').querySelector('input')!;
    await userEvent.click(tool);
    await userEvent.click(await screen.findByText('weather — The forecast'));

    // Its arguments: a required text field with the argument's description, a select of the enum.
    await waitFor(() => expect(within(node).getByTestId('config-node-2-arg.city')).toBeInTheDocument());
    const fetched = calls.find((c) => c.url.startsWith(`${base}/tool/fetch-fields`))!;
    expect(fetched.url).toContain('selectedValue=weather');
    expect(fetched.url).toContain('app_account_id=41');
    expect(within(node).getByTestId('config-node-2-arg.city-help')).toHaveTextContent('The city to forecast');
    await userEvent.type(within(node).getByTestId('config-node-2-arg.city').querySelector('textarea, input, [contenteditable]') ?? within(node).getByTestId('config-node-2-arg.city'), 'Paris');
    const unit = within(node).getByTestId('config-node-2-arg.unit').querySelector('input')!;
    await userEvent.click(unit);
    await userEvent.click(await screen.findByText('F'));

    await waitFor(() => expect(unit).toHaveValue('F'));

    // Another tool: the weather's arguments go, the new tool's come.
    await userEvent.clear(tool);
    await userEvent.click(tool);
    await userEvent.click(await screen.findByText('add — Add two numbers'));
    await waitFor(() => expect(within(node).getByTestId('config-node-2-arg.a')).toBeInTheDocument());
    expect(within(node).queryByTestId('config-node-2-arg.city')).not.toBeInTheDocument();
    const shown = [...node.querySelectorAll('[data-testid^="config-node-2-"]')]
      .map((e) => e.getAttribute('data-testid'))
      .filter((t) => !t?.endsWith('-help'));
    expect(shown).toEqual(['config-node-2-tool', 'config-node-2-timeout', 'config-node-2-arg.a']);
  });
});
