import type { NodeProps } from '@xyflow/react';
import { Input } from 'antd';
import { memo } from 'react';
import type { FlowNode, FormField } from '../../model/types';
import { FieldRows } from '../card/FieldRows';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';

/** Form input: a hosted form whose submissions start the flow; the user defines its fields. */
function FormInputNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const fields = data.formFields ?? [];
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">Form title</span>
        <Input className="nodrag" value={data.formTitle ?? ''} onChange={(e) => update({ formTitle: e.target.value }, 'title')} data-testid={`form-title-${id}`} />
      </div>
      <FieldRows fields={fields} onChange={(next: FormField[], key?: string) => update({ formFields: next }, key)} testId={`form-field-${id}`} />
    </NodeCard>
  );
}

export const FormInputNode = memo(FormInputNodeView);
