import { ApiOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';

/**
 * Called by a flow or an AI tool (docs/mcp.md): the flow runs when it is called with the inputs it
 * defines — by an MCP client at /mcp when it is offered as a tool, or by another flow. Its settings
 * are in `selectedAddonsValue`: `inputs` (as a form's fields), `description`, `mcp`.
 */
const flowCall: KindDefinition = {
  kind: 'flowCall',
  providers: ['flow_call'],
  nodeType: 'InHouse',
  label: {
    name: 'Called by a flow or AI tool',
    description: 'Starts the flow when an AI assistant calls it as an MCP tool, with the inputs you define.',
    icon: <ApiOutlined />,
  },
  fixedEvent: { id: 'flow_call', name: 'Flow Called' },
  triggerOnly: true,
  configFetch: false,
  optionsFetch: false,
  testDrawer: false,
  initialData: () => ({
    selectedAddonsValue: { inputs: [{ key: 'text', label: 'Text', type: 'text', required: true }], description: '', mcp: true },
  }),
  testBlocker: (data) => {
    const values = data.selectedAddonsValue ?? {};
    return values.mcp && !String(values.description ?? '').trim() ? 'Describe what the flow does: the model reads it to choose the tool' : null;
  },
  summary: (data) => {
    const inputs = (data.selectedAddonsValue?.inputs as unknown[] | undefined) ?? [];
    const mcp = data.selectedAddonsValue?.mcp ? ' · MCP tool' : '';
    return `${inputs.length} input${inputs.length === 1 ? '' : 's'}${mcp}`;
  },
};

export default flowCall;
