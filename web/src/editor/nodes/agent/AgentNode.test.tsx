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
});
