/** The rows that define a list of input fields (label, type, required): a form's fields, a called flow's inputs. */
import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Checkbox, Input, Select } from 'antd';
import type { FormField } from '../../model/types';

const TYPES: FormField['type'][] = ['text', 'textarea', 'email', 'number', 'date', 'select', 'checkbox'];

/** A key later steps reference, from a label ("Customer e-mail" -> customer_e_mail). */
export function keyOf(label: string, fallback: string): string {
  const key = label.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (!key) return fallback;
  return (/^[0-9]/.test(key) ? `_${key}` : key).slice(0, 64);
}

export function FieldRows({
  fields,
  onChange,
  testId,
  addLabel = 'Add field',
}: {
  fields: FormField[];
  onChange: (next: FormField[], key?: string) => void;
  /** data-testid prefix: `<testId>-label-<i>`, `<testId>-type-<i>`, `<testId>-required-<i>`, `<testId>-add`. */
  testId: string;
  addLabel?: string;
}) {
  const patch = (i: number, p: Partial<FormField>) => fields.map((f, j) => (j === i ? { ...f, ...p } : f));
  return (
    <>
      {fields.map((f, i) => (
        <div className="kz-form-field-row" key={i}>
          <Input className="nodrag" placeholder="Label" value={f.label} onChange={(e) => onChange(patch(i, { label: e.target.value, key: keyOf(e.target.value, f.key) }), `l${i}`)} data-testid={`${testId}-label-${i}`} />
          <Select className="nodrag" value={f.type} onChange={(type: FormField['type']) => onChange(patch(i, { type }))} options={TYPES.map((t) => ({ value: t, label: t }))} data-testid={`${testId}-type-${i}`} />
          <Checkbox checked={f.required} onChange={(e) => onChange(patch(i, { required: e.target.checked }))} data-testid={`${testId}-required-${i}`}>
            Required
          </Checkbox>
          <Button type="text" danger icon={<DeleteOutlined />} aria-label="Remove field" onClick={() => onChange(fields.filter((_, j) => j !== i))} />
        </div>
      ))}
      <Button size="small" icon={<PlusOutlined />} onClick={() => onChange([...fields, { key: `field_${fields.length + 1}`, label: '', type: 'text', required: false }])} data-testid={`${testId}-add`}>
        {addLabel}
      </Button>
    </>
  );
}
