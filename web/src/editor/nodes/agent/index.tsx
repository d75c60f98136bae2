/** The AI Agent's card (docs/ai.md): model account, instructions, prompt, tools, limits and memory key. */
import { useQuery } from '@tanstack/react-query';
import type { NodeProps } from '@xyflow/react';
import { Alert, Button, Collapse, Input, InputNumber, Select, Space, Tag, Typography } from 'antd';
import { memo, useState } from 'react';
import { $api, errorMessage } from '../../../api/typed';
import { appEvents, eventConfig, listApps } from '../../api/editorApi';
import { useEditor } from '../../EditorContext';
import type { FlowNode, KindData } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import {
  ADDON_KINDS,
  MAX_ITERATIONS,
  MAX_TOOLS,
  MCP_SERVER_APP,
  MODEL_APPS,
  toolNameOf,
  toolProblem,
  type AgentSettings,
  type AgentTool,
  type ToolKind,
} from './kind';

const TOOL_KINDS: { value: ToolKind; label: string }[] = [
  { value: 'app_action', label: 'App action' },
  { value: 'addon', label: 'Add-on' },
  { value: 'flow', label: 'Sub-flow' },
  { value: 'mcp', label: 'MCP tool' },
];

/** An account of `appId` (the same query as the Manage Accounts drawer's). */
function AccountSelect({ appId, value, onChange, testId }: { appId: number; value?: number; onChange: (id: number) => void; testId: string }) {
  const accounts = $api.useQuery('get', '/api/v1/apps/{app_id}/authorized_app_accounts', { params: { path: { app_id: appId } } });
  const list = accounts.data?.authorized_app_accounts ?? [];
  return (
    <Select
      className="nodrag"
      placeholder="Choose an account"
      loading={accounts.isPending}
      value={value}
      onChange={onChange}
      options={list.map((a) => ({ value: a.id, label: a.name, 'data-testid': `${testId}-option-${a.id}` }))}
      notFoundContent="No account: add one under Accounts"
      data-testid={testId}
    />
  );
}

/** An app action tool: the app, its action, the account, and for each field: filled by the agent or fixed. */
function AppActionTool({ tool, set, testId }: { tool: AgentTool; set: (patch: Partial<AgentTool>) => void; testId: string }) {
  const [search, setSearch] = useState('');
  const apps = useQuery({ queryKey: ['agent-apps', search], queryFn: () => listApps('actions', search, 20), staleTime: 60_000 });
  const events = useQuery({
    queryKey: ['editor-events', tool.app_id, 'right'],
    queryFn: () => appEvents(tool.app_id ?? 0, 'right'),
    enabled: Boolean(tool.app_id),
  });
  const fields = useQuery({
    queryKey: ['agent-fields', tool.app_id, tool.event, tool.account_id ?? null],
    queryFn: () => eventConfig(tool.app_id ?? 0, tool.event ?? '', 'right', tool.account_id ?? null),
    enabled: Boolean(tool.app_id && tool.event),
  });
  const fixed = tool.fixed ?? [];
  const agentFields = tool.agent_fields ?? [];
  const mode = (key: string) => (agentFields.includes(key) ? 'agent' : fixed.some((f) => f.key === key) ? 'fixed' : 'unused');
  const setMode = (key: string, next: string) =>
    set({
      agent_fields: next === 'agent' ? [...agentFields.filter((k) => k !== key), key] : agentFields.filter((k) => k !== key),
      fixed: next === 'fixed' ? [...fixed.filter((f) => f.key !== key), { key, value: '' }] : fixed.filter((f) => f.key !== key),
    });
  const appOptions = (apps.data?.apps ?? []).map((a) => ({ value: a.id, label: a.name, 'data-testid': `${testId}-app-option-${a.id}` }));
  if (tool.app_id && !appOptions.some((o) => o.value === tool.app_id)) appOptions.unshift({ value: tool.app_id, label: tool.app_name ?? String(tool.app_id), 'data-testid': '' });
  return (
    <>
      <span className="kz-field-label">App</span>
      <Select
        className="nodrag"
        showSearch
        filterOption={false}
        onSearch={setSearch}
        placeholder="Search an app"
        value={tool.app_id}
        loading={apps.isFetching}
        onChange={(id: number) => {
          const app = apps.data?.apps.find((a) => a.id === id);
          set({ app_id: id, app_name: app?.name, event: undefined, account_id: undefined, fixed: [], agent_fields: [] });
        }}
        options={appOptions}
        data-testid={`${testId}-app`}
      />
      {tool.app_id && (
        <>
          <span className="kz-field-label">Action</span>
          <Select
            className="nodrag"
            placeholder="Choose an action"
            loading={events.isPending}
            value={tool.event}
            onChange={(event: string) => set({ event, fixed: [], agent_fields: [], name: tool.name || event })}
            options={(events.data?.app_events ?? []).filter((e) => e.kind === 'action').map((e) => ({ value: e.id, label: e.name, 'data-testid': `${testId}-event-option-${e.id}` }))}
            data-testid={`${testId}-event`}
          />
          <span className="kz-field-label">Account</span>
          <AccountSelect appId={tool.app_id} value={tool.account_id} onChange={(account_id) => set({ account_id })} testId={`${testId}-account`} />
        </>
      )}
      {tool.event && (
        <div className="kz-field" data-testid={`${testId}-fields`}>
          <span className="kz-field-label">Fields</span>
          {fields.isError && <Alert type="error" showIcon title="The action's fields could not be loaded" />}
          {(fields.data?.app_event_configurations ?? []).map((f) => (
            <div key={f.config_key} className="kz-agent-field">
              <Space wrap size={4}>
                <Typography.Text>
                  {f.label}
                  {f.config_key_required ? ' *' : ''}
                </Typography.Text>
                <Select
                  className="nodrag"
                  size="small"
                  style={{ minWidth: 150 }}
                  value={mode(f.config_key)}
                  onChange={(next: string) => setMode(f.config_key, next)}
                  options={[
                    { value: 'agent', label: 'The agent fills it', 'data-testid': `${testId}-mode-${f.config_key}-agent` },
                    { value: 'fixed', label: 'Fixed value', 'data-testid': `${testId}-mode-${f.config_key}-fixed` },
                    { value: 'unused', label: 'Not sent', 'data-testid': `${testId}-mode-${f.config_key}-unused` },
                  ]}
                  data-testid={`${testId}-mode-${f.config_key}`}
                />
              </Space>
              {mode(f.config_key) === 'fixed' && (
                <Input
                  className="nodrag"
                  size="small"
                  placeholder="A value, or {{node-1.field}}"
                  value={fixed.find((x) => x.key === f.config_key)?.value ?? ''}
                  onChange={(e) => set({ fixed: fixed.map((x) => (x.key === f.config_key ? { ...x, value: e.target.value } : x)) })}
                  data-testid={`${testId}-fixed-${f.config_key}`}
                />
              )}
            </div>
          ))}
        </div>
      )}
    </>
  );
}

/** Whether a tool still has the name the card gave it (then picking a flow or an MCP tool names it). */
const defaultName = (name: string) => /^tool_\d+$/.test(name);

/** A sub-flow tool: one of the account's published flows that start with 'Called by a flow or AI tool'; its
 * inputs are the tool's parameters (kept with the tool when picked). */
function FlowTool({ tool, set, testId }: { tool: AgentTool; set: (patch: Partial<AgentTool>) => void; testId: string }) {
  const konnectId = useEditor((s) => s.konnectId);
  const flows = $api.useQuery('get', '/api/v1/konnects/callable');
  const listed = (flows.data?.flows ?? []).filter((f) => f.id !== konnectId);
  const chosen = listed.find((f) => f.id === tool.konnect_id);
  const inputs = tool.flow_inputs ?? [];
  return (
    <>
      <span className="kz-field-label">Flow to call</span>
      <Select
        className="nodrag"
        showSearch
        optionFilterProp="label"
        loading={flows.isPending}
        placeholder="One of your published flows that starts with 'Called by a flow or AI tool'"
        value={tool.konnect_id}
        onChange={(flowId: number) => {
          const flow = listed.find((f) => f.id === flowId);
          set({
            konnect_id: flowId,
            flow_inputs: (flow?.inputs ?? []) as Record<string, unknown>[],
            ...(flow && defaultName(tool.name) ? { name: toolNameOf(flow.name) } : {}),
            ...(flow?.description && !tool.description ? { description: flow.description } : {}),
          });
        }}
        options={listed.map((f) => ({ value: f.id, label: f.name, 'data-testid': `${testId}-flow-option-${f.id}` }))}
        notFoundContent={flows.isPending ? 'Loading…' : "No published flow starts with 'Called by a flow or AI tool'"}
        data-testid={`${testId}-flow`}
      />
      {tool.konnect_id !== undefined && !flows.isPending && !chosen && (
        <Typography.Text type="danger" data-testid={`${testId}-flow-missing`}>
          Flow {tool.konnect_id} is no longer published with the 'Called by a flow or AI tool' trigger: publishing is refused.
        </Typography.Text>
      )}
      {tool.konnect_id !== undefined && (
        <span className="kz-field-hint" data-testid={`${testId}-flow-inputs`}>
          {inputs.length ? `The agent fills: ${inputs.map((i) => String(i.key)).join(', ')}. ` : 'The flow takes no inputs. '}
          The agent waits for its result (its Respond body, or its last step's output) within Max seconds.
        </span>
      )}
    </>
  );
}

/** An MCP tool: an MCP Server account, then one of its server's tools (listed by the api). */
function McpTool({ tool, set, testId }: { tool: AgentTool; set: (patch: Partial<AgentTool>) => void; testId: string }) {
  const accountId = tool.account_id ?? 0;
  const listing = $api.useQuery(
    'get',
    '/api/v1/app_users/{account_id}/mcp_tools',
    { params: { path: { account_id: accountId } } },
    { enabled: accountId > 0, retry: false, staleTime: 60_000 },
  );
  const tools = listing.data?.tools ?? [];
  const chosen = tools.find((t) => t.name === tool.mcp_tool);
  return (
    <>
      <span className="kz-field-label">MCP server (an MCP Server account)</span>
      <AccountSelect appId={MCP_SERVER_APP} value={tool.account_id} onChange={(account_id) => set({ account_id, mcp_tool: undefined })} testId={`${testId}-mcp-account`} />
      {accountId > 0 && (
        <>
          <span className="kz-field-label">Tool</span>
          <Select
            className="nodrag"
            showSearch
            optionFilterProp="label"
            loading={listing.isPending}
            placeholder="Choose one of the server's tools"
            value={tool.mcp_tool}
            onChange={(name: string) =>
              set({ mcp_tool: name, mcp_server: listing.data?.server, ...(defaultName(tool.name) ? { name: toolNameOf(name) } : {}) })
            }
            options={tools.map((t) => ({ value: t.name, label: t.label || t.name, 'data-testid': `${testId}-mcp-tool-option-${t.name}` }))}
            data-testid={`${testId}-mcp-tool`}
          />
          {listing.isError && (
            <Alert
              type="error"
              showIcon
              title={`The server's tools could not be listed: ${errorMessage(listing.error, 'the api did not answer')}`}
              data-testid={`${testId}-mcp-error`}
            />
          )}
          {chosen && (
            <span className="kz-field-hint" data-testid={`${testId}-mcp-arguments`}>
              {chosen.fields.length ? `The agent fills: ${chosen.fields.map((f) => f.name).join(', ')}.` : 'The tool takes no arguments.'} Its input schema is read from the
              server when the agent starts.
            </span>
          )}
        </>
      )}
    </>
  );
}

function ToolEditor({ tool, set, remove, testId }: { tool: AgentTool; set: (patch: Partial<AgentTool>) => void; remove: () => void; testId: string }) {
  const problem = toolProblem(tool);
  return (
    <div className="kz-agent-tool" data-testid={testId}>
      <Space wrap size={4}>
        <Tag>{TOOL_KINDS.find((k) => k.value === tool.kind)?.label}</Tag>
        <Input
          className="nodrag"
          size="small"
          style={{ width: 180 }}
          placeholder="tool_name"
          value={tool.name}
          onChange={(e) => set({ name: e.target.value })}
          data-testid={`${testId}-name`}
        />
        <Button size="small" danger onClick={remove} data-testid={`${testId}-remove`}>
          Remove
        </Button>
      </Space>
      <Input.TextArea
        className="nodrag"
        rows={1}
        maxLength={2000}
        placeholder="What the tool does (the model reads it; empty: the action's own help)"
        value={tool.description ?? ''}
        onChange={(e) => set({ description: e.target.value })}
        data-testid={`${testId}-description`}
      />
      {tool.kind === 'app_action' && <AppActionTool tool={tool} set={set} testId={testId} />}
      {tool.kind === 'addon' && (
        <>
          <Select
            className="nodrag"
            placeholder="Choose the add-on"
            value={tool.step_kind}
            onChange={(step_kind: string) => set({ step_kind })}
            options={ADDON_KINDS.map((k) => ({ value: k, label: k }))}
            data-testid={`${testId}-addon`}
          />
          <Input
            className="nodrag"
            placeholder="Settings the agent fills, comma-separated (e.g. text)"
            value={(tool.agent_fields ?? []).join(', ')}
            onChange={(e) => set({ agent_fields: e.target.value.split(',').map((s) => s.trim()).filter(Boolean) })}
            data-testid={`${testId}-agent-fields`}
          />
          <Input.TextArea
            className="nodrag"
            rows={2}
            placeholder='Fixed settings, as JSON (e.g. {"algorithm": "sha256"})'
            value={tool.config_json ?? ''}
            onChange={(e) => set({ config_json: e.target.value })}
            data-testid={`${testId}-config`}
          />
        </>
      )}
      {tool.kind === 'flow' && <FlowTool tool={tool} set={set} testId={testId} />}
      {tool.kind === 'mcp' && <McpTool tool={tool} set={set} testId={testId} />}
      {problem && <Typography.Text type="warning">{problem}</Typography.Text>}
    </div>
  );
}

function AgentNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const agent: AgentSettings = (data as KindData<'agent'>).agent ?? {};
  const set = (patch: Partial<AgentSettings>, key?: string) => update({ agent: { ...agent, ...patch } }, key);
  const tools = agent.tools ?? [];
  const setTool = (index: number, patch: Partial<AgentTool>) => set({ tools: tools.map((t, i) => (i === index ? { ...t, ...patch } : t)) });
  const addTool = (kind: ToolKind) => {
    let n = tools.length + 1;
    while (tools.some((t) => t.name === `tool_${n}`)) n += 1;
    set({ tools: [...tools, { kind, name: `tool_${n}`, fixed: [], agent_fields: [] }] });
  };
  const appId = agent.app_id ?? 132;
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">Model provider</span>
        <Select
          className="nodrag"
          value={appId}
          onChange={(app_id: number) => set({ app_id, account_id: undefined })}
          options={MODEL_APPS.map((a) => ({ value: a.id, label: a.name }))}
          data-testid={`agent-provider-${id}`}
        />
        <span className="kz-field-label">Account</span>
        <AccountSelect appId={appId} value={agent.account_id} onChange={(account_id) => set({ account_id })} testId={`agent-account-${id}`} />
        <span className="kz-field-label">Model</span>
        <Input className="nodrag" placeholder="e.g. gpt-4o-mini" value={agent.model ?? ''} onChange={(e) => set({ model: e.target.value }, 'model')} data-testid={`agent-model-${id}`} />
      </div>
      <div className="kz-field">
        <span className="kz-field-label">Instructions</span>
        <Input.TextArea
          className="nodrag"
          rows={2}
          placeholder="Who the agent is and how it works: you answer support tickets; file a ticket when..."
          value={agent.instructions ?? ''}
          onChange={(e) => set({ instructions: e.target.value }, 'instructions')}
          data-testid={`agent-instructions-${id}`}
        />
        <span className="kz-field-label">Prompt</span>
        <Input.TextArea
          className="nodrag"
          rows={2}
          placeholder="What it is asked, e.g. {{node-1.message}}"
          value={agent.prompt ?? ''}
          onChange={(e) => set({ prompt: e.target.value }, 'prompt')}
          data-testid={`agent-prompt-${id}`}
        />
      </div>
      <div className="kz-field" data-testid={`agent-tools-${id}`}>
        <span className="kz-field-label">Tools ({tools.length})</span>
        {tools.map((tool, i) => (
          <ToolEditor
            key={i}
            tool={tool}
            set={(patch) => setTool(i, patch)}
            remove={() => set({ tools: tools.filter((_, j) => j !== i) })}
            testId={`agent-tool-${id}-${i}`}
          />
        ))}
        {tools.length < MAX_TOOLS && (
          <Space wrap size={4}>
            {TOOL_KINDS.map((k) => (
              <Button key={k.value} size="small" onClick={() => addTool(k.value)} data-testid={`agent-add-${k.value}-${id}`}>
                + {k.label}
              </Button>
            ))}
          </Space>
        )}
      </div>
      <Collapse
        size="small"
        items={[
          {
            key: 'limits',
            label: 'Limits, memory and answer format',
            children: (
              <div className="kz-field">
                <span className="kz-field-label">Max iterations (model calls, 1 to {MAX_ITERATIONS})</span>
                <InputNumber className="nodrag" min={1} max={MAX_ITERATIONS} value={agent.max_iterations ?? 10} onChange={(v) => set({ max_iterations: v })} data-testid={`agent-iterations-${id}`} />
                <span className="kz-field-label">Max total tokens (empty: no limit)</span>
                <InputNumber className="nodrag" min={1} max={2_000_000} value={agent.max_total_tokens ?? null} onChange={(v) => set({ max_total_tokens: v })} data-testid={`agent-tokens-${id}`} />
                <span className="kz-field-label">Max seconds (1 to 900)</span>
                <InputNumber className="nodrag" min={1} max={900} value={agent.max_seconds ?? 300} onChange={(v) => set({ max_seconds: v })} data-testid={`agent-seconds-${id}`} />
                <span className="kz-field-label">Conversation key (memory; empty: none)</span>
                <Input
                  className="nodrag"
                  placeholder="e.g. {{node-1.chat_id}}"
                  value={agent.conversation_key ?? ''}
                  onChange={(e) => set({ conversation_key: e.target.value }, 'conversation_key')}
                  data-testid={`agent-key-${id}`}
                />
                <span className="kz-field-label">JSON Schema of the answer (optional)</span>
                <Input.TextArea className="nodrag" rows={2} value={agent.json_schema ?? ''} onChange={(e) => set({ json_schema: e.target.value }, 'json_schema')} data-testid={`agent-schema-${id}`} />
              </div>
            ),
          },
        ]}
      />
    </NodeCard>
  );
}

export default memo(AgentNodeView);
