import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import type { NodeProps } from '@xyflow/react';
import { Button, Checkbox, Input, Select } from 'antd';
import { memo } from 'react';
import type { FlowNode, FormField } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';

const TYPES: FormField['type'][] = ['text', 'textarea', 'email', 'number', 'date', 'select', 'checkbox'];

/** Form input: a hosted form whose submissions start the flow; the user defines its fields. */
function FormInputNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const fields = data.formFields ?? [];
  const set = (next: FormField[], key?: string) => update({ formFields: next }, key);
  const patch = (i: number, p: Partial<FormField>) => fields.map((f, j) => (j === i ? { ...f, ...p } : f));
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">Form title</span>
        <Input className="nodrag" value={data.formTitle ?? ''} onChange={(e) => update({ formTitle: e.target.value }, 'title')} data-testid={`form-title-${id}`} />
      </div>
      {fields.map((f, i) => (
        <div className="kz-form-field-row" key={i}>
          <Input className="nodrag" placeholder="Label" value={f.label} onChange={(e) => set(patch(i, { label: e.target.value, key: e.target.value.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_') || f.key }), `l${i}`)} data-testid={`form-field-label-${id}-${i}`} />
          <Select className="nodrag" value={f.type} onChange={(type: FormField['type']) => set(patch(i, { type }))} options={TYPES.map((t) => ({ value: t, label: t }))} />
          <Checkbox checked={f.required} onChange={(e) => set(patch(i, { required: e.target.checked }))}>
            Required
          </Checkbox>
          <Button type="text" danger icon={<DeleteOutlined />} aria-label="Remove field" onClick={() => set(fields.filter((_, j) => j !== i))} />
        </div>
      ))}
      <Button size="small" icon={<PlusOutlined />} onClick={() => set([...fields, { key: `field_${fields.length + 1}`, label: '', type: 'text', required: false }])} data-testid={`form-field-add-${id}`}>
        Add field
      </Button>
    </NodeCard>
  );
}

export const FormInputNode = memo(FormInputNodeView);
