import { ReactFlowProvider } from '@xyflow/react';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../../api/typed';
import { mockFetch, renderAt } from '../../../test/utils';
import { EditorProvider } from '../../EditorContext';
import { EditorCanvas } from '../../EditorCanvas';
import { toCanvasJson } from '../../model/canvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation } from '../../model/operations';
import type { Flow } from '../../model/types';
import { createEditorStore } from '../../store';
import { testBlocker } from '../card/useNodeTest';
import agent, { agentProblem, type AgentSettings } from './kind';

const AGENT_APP = addOn('agent', 'AI Agent', 24);

function flowWithAgent(): Flow {
  return applyOperation(applyOperation({ apps: [], links: [] } as Flow, { type: 'addTrigger', app: webhookApp }), { type: 'addAction', app: AGENT_APP });
}

function choose(testId: string, optionTestId: string) {
  const select = screen.getByTestId(testId);
  fireEvent.mouseDown(select.querySelector('.ant-select-selector') ?? select);
  return screen.findByTestId(optionTestId).then((option) => fireEvent.click(option));
}

describe('the AI Agent kind', () => {
  beforeEach(() => queryClient.clear());

  it('is added as an InHouse node with its event and empty settings, saved under data.agent', () => {
    const node = flowWithAgent().apps[1];
    expect(node.type).toBe('InHouse');
    expect(node.data.selectedEvent).toEqual({ id: 'run_agent', name: 'Run Agent' });
    const saved = toCanvasJson(flowWithAgent(), 'f').apps[1];
    expect((saved.data as { agent?: AgentSettings }).agent).toMatchObject({ app_id: 132, tools: [], max_iterations: 10 });
    expect(testBlocker(flowWithAgent().apps, null, node)).toBe("Choose the model's account");
  });

  it('refuses a test until the account, model, prompt and tools are complete, naming what is missing', () => {
    const ready: AgentSettings = { app_id: 132, account_id: 4, model: 'scripted-1', prompt: 'Help', tools: [] };
    expect(agentProblem(ready)).toBeNull();
    expect(agentProblem({ ...ready, model: ' ' })).toBe('Enter the model');
    expect(agentProblem({ ...ready, tools: [{ kind: 'app_action', name: 'post' }] })).toBe('Tool post: choose the app and its action');
    expect(agentProblem({ ...ready, tools: [{ kind: 'addon', name: 'bad name' }] })).toContain('a name of 1 to 64 letters');
    expect(agentProblem({ ...ready, tools: [{ kind: 'flow', name: 'a', konnect_id: 3 }, { kind: 'flow', name: 'a', konnect_id: 4 }] })).toBe(
      'Two tools have the same name',
    );
    expect(agent.summary?.({ ...flowWithAgent().apps[1].data, agent: { ...ready, tools: [{ kind: 'flow', name: 'a' }] } })).toBe('1 tool');
  });

  it('builds an app action tool by clicks: the app, its action, the account, fields the agent fills or fixes', async () => {
    const store = createEditorStore(flowWithAgent());
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/apps/132/authorized_app_accounts'))
        return { body: { authorized_app_accounts: [{ id: 4, name: 'Scripted', created_at: '2026-11-29T00:00:00Z' }] } };
      if (c.url.startsWith('/api/v1/apps/501/authorized_app_accounts'))
        return { body: { authorized_app_accounts: [{ id: 9, name: 'Work', created_at: '2026-11-29T00:00:00Z' }] } };
      if (c.url.startsWith('/api/v1/apps/get_actions'))
        return { body: { apps: [{ id: 501, name: 'Slack', image_url: null, status: 'Active', provider: 'slack', app_type: 'api', auth_type: 'token' }], total_apps: 1 } };
      if (c.url.startsWith('/api/v1/apps/501/app_events?')) return { body: { app_events: [{ id: 'post', name: 'Post Message', kind: 'action' }, { id: 'new', name: 'New Message', kind: 'trigger' }] } };
      if (c.url.startsWith('/api/v1/apps/501/app_events/post/event_config/right'))
        return {
          body: {
            app_event_configurations: [
              { id: '1', config_key: 'channel', label: 'Channel', config_key_required: true, key_value_type: 'display', sequence: 0, title: 'Channel', type: 'text' },
              { id: '2', config_key: 'text', label: 'Text', config_key_required: true, key_value_type: 'display', sequence: 0, title: 'Text', type: 'text' },
            ],
          },
        };
      return undefined;
    });
    renderAt(
      <ReactFlowProvider>
        <EditorProvider store={store}>
          <EditorCanvas />
        </EditorProvider>
      </ReactFlowProvider>,
    );
    const settings = () => (store.getState().apps.find((n) => n.id === 'node-2')?.data as { agent?: AgentSettings }).agent ?? {};
    await screen.findByTestId('agent-model-node-2');
    await choose('agent-account-node-2', 'agent-account-node-2-option-4');
    fireEvent.change(screen.getByTestId('agent-model-node-2'), { target: { value: 'scripted-1' } });
    fireEvent.change(screen.getByTestId('agent-prompt-node-2'), { target: { value: 'Help {{node-1.user}}' } });
    fireEvent.click(screen.getByTestId('agent-add-app_action-node-2'));
    await choose('agent-tool-node-2-0-app', 'agent-tool-node-2-0-app-option-501');
    await choose('agent-tool-node-2-0-event', 'agent-tool-node-2-0-event-option-post');
    await choose('agent-tool-node-2-0-account', 'agent-tool-node-2-0-account-option-9');
    await screen.findByTestId('agent-tool-node-2-0-mode-channel');
    await choose('agent-tool-node-2-0-mode-channel', 'agent-tool-node-2-0-mode-channel-fixed');
    fireEvent.change(await screen.findByTestId('agent-tool-node-2-0-fixed-channel'), { target: { value: '#help' } });
    await choose('agent-tool-node-2-0-mode-text', 'agent-tool-node-2-0-mode-text-agent');
    await waitFor(() =>
      expect(settings()).toMatchObject({
        app_id: 132,
        account_id: 4,
        model: 'scripted-1',
        prompt: 'Help {{node-1.user}}',
        tools: [{ kind: 'app_action', name: 'tool_1', app_id: 501, event: 'post', account_id: 9, fixed: [{ key: 'channel', value: '#help' }], agent_fields: ['text'] }],
      }),
    );
    expect(agentProblem(settings())).toBeNull();
  });

  it('builds a sub-flow tool and an MCP tool by clicks: the flow and its inputs, the MCP account and its tool', async () => {
    const store = createEditorStore(flowWithAgent());
    const callable = {
      flows: [
        {
          id: 41,
          name: 'Look up order',
          description: 'Finds an order by its number',
          inputs: [{ key: 'number', label: 'Order number', type: 'text', required: true, options: [], placeholder: '', max_length: 1000 }],
        },
      ],
    };
    const mcpTools = {
      server: 'http://127.0.0.1:8931/mcp',
      tools: [
        {
          name: 'add',
          label: 'add: Adds two numbers',
          description: 'Adds two numbers',
          input_schema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a'] },
          fields: [
            { name: 'a', label: 'a', type: 'integer', required: true, help: '', options: [] },
            { name: 'b', label: 'b', type: 'integer', required: false, help: '', options: [] },
          ],
        },
      ],
    };
    const calls = mockFetch((c) => {
      if (c.url.split('?')[0] === '/api/v1/konnects/callable') return { body: callable };
      if (c.url.startsWith('/api/v1/apps/25/authorized_app_accounts'))
        return { body: { authorized_app_accounts: [{ id: 12, name: 'Tools server', created_at: '2026-11-29T00:00:00Z' }] } };
      if (c.url.startsWith('/api/v1/app_users/12/mcp_tools')) return { body: mcpTools };
      if (c.url.startsWith('/api/v1/apps/132/authorized_app_accounts')) return { body: { authorized_app_accounts: [] } };
      return undefined;
    });
    renderAt(
      <ReactFlowProvider>
        <EditorProvider store={store}>
          <EditorCanvas />
        </EditorProvider>
      </ReactFlowProvider>,
    );
    const settings = () => (store.getState().apps.find((n) => n.id === 'node-2')?.data as { agent?: AgentSettings }).agent ?? {};
    await screen.findByTestId('agent-model-node-2');
    fireEvent.click(screen.getByTestId('agent-add-flow-node-2'));
    await choose('agent-tool-node-2-0-flow', 'agent-tool-node-2-0-flow-option-41');
    expect(await screen.findByTestId('agent-tool-node-2-0-flow-inputs')).toHaveTextContent('The agent fills: number');
    fireEvent.click(screen.getByTestId('agent-add-mcp-node-2'));
    await choose('agent-tool-node-2-1-mcp-account', 'agent-tool-node-2-1-mcp-account-option-12');
    await choose('agent-tool-node-2-1-mcp-tool', 'agent-tool-node-2-1-mcp-tool-option-add');
    expect(await screen.findByTestId('agent-tool-node-2-1-mcp-arguments')).toHaveTextContent('The agent fills: a, b');
    await waitFor(() =>
      expect(settings().tools).toEqual([
        expect.objectContaining({
          kind: 'flow',
          name: 'look_up_order',
          konnect_id: 41,
          description: 'Finds an order by its number',
          flow_inputs: callable.flows[0].inputs,
        }),
        expect.objectContaining({ kind: 'mcp', name: 'add', account_id: 12, mcp_tool: 'add', mcp_server: 'http://127.0.0.1:8931/mcp' }),
      ]),
    );
    expect(calls.some((c) => c.url.startsWith('/api/v1/app_users/12/mcp_tools'))).toBe(true);
    expect(agentProblem({ app_id: 132, account_id: 4, model: 'm', prompt: 'p', tools: settings().tools })).toBeNull();
    expect(agentProblem({ app_id: 132, account_id: 4, model: 'm', prompt: 'p', tools: [{ kind: 'mcp', name: 'x', mcp_tool: 'add' }] })).toBe(
      'Tool x: choose the MCP Server account and its tool',
    );
  });

  it('says so when the flow of a sub-flow tool is no longer callable, and when an MCP server cannot be listed', async () => {
    const flow = flowWithAgent();
    (flow.apps[1].data as { agent?: AgentSettings }).agent = {
      app_id: 132,
      tools: [
        { kind: 'flow', name: 'gone', konnect_id: 99, flow_inputs: [] },
        { kind: 'mcp', name: 'broken', account_id: 13, mcp_tool: 'add' },
      ],
    };
    const store = createEditorStore(flow);
    mockFetch((c) => {
      if (c.url.split('?')[0] === '/api/v1/konnects/callable') return { body: { flows: [] } };
      if (c.url.startsWith('/api/v1/app_users/13/mcp_tools')) return { status: 502, body: { message: 'Could not connect to the MCP server' } };
      if (c.url.includes('/authorized_app_accounts')) return { body: { authorized_app_accounts: [] } };
      return undefined;
    });
    renderAt(
      <ReactFlowProvider>
        <EditorProvider store={store}>
          <EditorCanvas />
        </EditorProvider>
      </ReactFlowProvider>,
    );
    expect(await screen.findByTestId('agent-tool-node-2-0-flow-missing')).toHaveTextContent('Flow 99 is no longer published');
    expect(await screen.findByTestId('agent-tool-node-2-1-mcp-error')).toHaveTextContent('Could not connect to the MCP server');
  });
});
