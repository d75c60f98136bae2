/** The AI Agent add-on (catalogue app 24, docs/ai.md): its data and its definition (its card is index.tsx). */
import { RobotOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';

/** The model providers an agent may use (their catalogue app ids). */
export const MODEL_APPS = [
  { id: 132, name: 'OpenAI-compatible Model' },
  { id: 120, name: 'OpenAI' },
  { id: 133, name: 'Anthropic' },
] as const;

/** The add-ons an agent may call as tools (konnectz_contracts.steps.agent.ADDON_KINDS). */
export const ADDON_KINDS = ['api_call', 'formatter', 'generator', 'hash', 'json_parse'] as const;
export const MAX_ITERATIONS = 50;
export const MAX_TOOLS = 20;
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The MCP Server app (catalogue/apps/mcp_server.yaml): its accounts are MCP servers. */
export const MCP_SERVER_APP = 25;

/** A tool name (TOOL_NAME) made of a flow's or an MCP tool's name: `Look up orders` -> `look_up_orders`. */
export function toolNameOf(text: string): string {
  const slug = text.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return slug || 'tool';
}

export type ToolKind = 'app_action' | 'addon' | 'flow' | 'mcp';

/** One tool (konnectz_contracts.steps.agent.AgentTool). */
export type AgentTool = {
  kind: ToolKind;
  name: string;
  description?: string;
  app_id?: number;
  app_name?: string;
  event?: string;
  account_id?: number;
  fixed?: { key: string; value: string }[];
  agent_fields?: string[];
  step_kind?: string;
  config_json?: string;
  konnect_id?: number;
  /** The called flow's inputs as its listing gave them when it was picked (the tool's parameters). */
  flow_inputs?: Record<string, unknown>[];
  /** The MCP server's URL, shown only (the account says where the server is). */
  mcp_server?: string;
  mcp_tool?: string;
};

/** The Agent card's settings, saved as the node's data.agent (compiled by konnectz_contracts.steps.agent). */
export type AgentSettings = {
  app_id?: number;
  account_id?: number;
  model?: string;
  instructions?: string;
  prompt?: string;
  tools?: AgentTool[];
  max_iterations?: number | null;
  max_total_tokens?: number | null;
  max_seconds?: number | null;
  conversation_key?: string;
  json_schema?: string;
};

export interface AgentData {
  agent?: AgentSettings;
}

/** Why a tool is not ready, or null. */
export function toolProblem(tool: AgentTool): string | null {
  if (!TOOL_NAME.test(tool.name)) return `Tool "${tool.name}": a name of 1 to 64 letters, digits, _ or -`;
  if (tool.kind === 'app_action' && (!tool.app_id || !tool.event)) return `Tool ${tool.name}: choose the app and its action`;
  if (tool.kind === 'addon' && !ADDON_KINDS.includes((tool.step_kind ?? '') as (typeof ADDON_KINDS)[number]))
    return `Tool ${tool.name}: choose the add-on`;
  if (tool.kind === 'flow' && !tool.konnect_id) return `Tool ${tool.name}: choose the flow to call`;
  if (tool.kind === 'mcp' && (!tool.account_id || !tool.mcp_tool)) return `Tool ${tool.name}: choose the MCP Server account and its tool`;
  return null;
}

/** Why the agent cannot be tested, or null (the api says the same when it compiles it). */
export function agentProblem(agent: AgentSettings | undefined): string | null {
  const a = agent ?? {};
  if (!a.app_id) return "Choose the model's provider";
  if (!a.account_id) return "Choose the model's account";
  if (!String(a.model ?? '').trim()) return 'Enter the model';
  if (!String(a.prompt ?? '').trim()) return 'Enter the prompt';
  const names = (a.tools ?? []).map((t) => t.name);
  if (new Set(names).size !== names.length) return 'Two tools have the same name';
  for (const tool of a.tools ?? []) {
    const problem = toolProblem(tool);
    if (problem) return problem;
  }
  return null;
}

const agent: KindDefinition<'agent'> = {
  kind: 'agent',
  providers: ['agent'],
  nodeType: 'InHouse',
  label: {
    name: 'AI Agent',
    description: 'A model that calls the tools you give it until it has an answer.',
    icon: <RobotOutlined />,
  },
  fixedEvent: { id: 'run_agent', name: 'Run Agent' },
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({
    agent: { app_id: 132, model: '', instructions: '', prompt: '', tools: [], max_iterations: 10, max_seconds: 300, conversation_key: '' },
  }),
  testBlocker: (data) => agentProblem(data.agent),
  summary: (data) => {
    const tools = data.agent?.tools ?? [];
    return `${tools.length} tool${tools.length === 1 ? '' : 's'}`;
  },
};

export default agent;

declare module '../../model/types' {
  interface KindDataMap {
    agent: AgentData;
  }
}
