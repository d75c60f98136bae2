/** The called-flow trigger's card: its inputs, its description and whether MCP clients see it (its definition is kind.tsx). */
import type { NodeProps } from '@xyflow/react';
import { Checkbox, Input } from 'antd';
import { memo } from 'react';
import type { FlowNode, FormField } from '../../model/types';
import { FieldRows } from '../card/FieldRows';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';

function FlowCallNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const values = data.selectedAddonsValue ?? {};
  const inputs = (values.inputs as FormField[] | undefined) ?? [];
  const set = (patch: Record<string, unknown>, key?: string) => update({ selectedAddonsValue: { ...values, ...patch } }, key);
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">What the flow does</span>
        <Input.TextArea
          className="nodrag"
          rows={2}
          maxLength={1000}
          value={String(values.description ?? '')}
          onChange={(e) => set({ description: e.target.value }, 'description')}
          placeholder="Places an order for a customer and answers its number"
          data-testid={`flow-call-description-${id}`}
        />
      </div>
      <div className="kz-field">
        <span className="kz-field-label">Inputs</span>
        <FieldRows fields={inputs} onChange={(next, key) => set({ inputs: next }, key)} testId={`flow-call-input-${id}`} addLabel="Add input" />
        <span className="kz-field-hint">Later steps use them as {'{{'}node-1.&lt;key&gt;{'}}'}; a call without a required input is refused.</span>
      </div>
      <Checkbox checked={Boolean(values.mcp)} onChange={(e) => set({ mcp: e.target.checked })} data-testid={`flow-call-mcp-${id}`}>
        Offer as an MCP tool (AI assistants call it at /mcp with an MCP token)
      </Checkbox>
    </NodeCard>
  );
}

export default memo(FlowCallNodeView);
