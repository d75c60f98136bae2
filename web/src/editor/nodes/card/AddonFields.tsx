import { Input, Select } from 'antd';
import { RefInput } from '../../components/RefInput';
import type { FlowNodeData } from '../../model/types';
import { useNodeUpdate } from './useNodeUpdate';

/** A labelled field of an add-on stored in selectedAddonsValue (what the api's compilers read). */
export function AddonText({ id, data, name, label, refs = true, required }: { id: string; data: FlowNodeData; name: string; label: string; refs?: boolean; required?: boolean }) {
  const { update } = useNodeUpdate(id);
  const value = String(data.selectedAddonsValue?.[name] ?? '');
  const set = (v: string) => update((d) => ({ selectedAddonsValue: { ...d.selectedAddonsValue, [name]: v } }), name);
  return (
    <div className="kz-field">
      <span className="kz-field-label">
        {label}
        {required && <span className="kz-required">*</span>}
      </span>
      {refs ? (
        <RefInput nodeId={id} value={value} onChange={set} placeholder="Type @ to use data of earlier steps" testId={`addon-${id}-${name}`} />
      ) : (
        <Input className="nodrag" value={value} onChange={(e) => set(e.target.value)} data-testid={`addon-${id}-${name}`} />
      )}
    </div>
  );
}

export function AddonSelect({ id, data, name, label, options }: { id: string; data: FlowNodeData; name: string; label: string; options: { value: string; label: string }[] }) {
  const { update } = useNodeUpdate(id);
  const value = data.selectedAddonsValue?.[name];
  return (
    <div className="kz-field">
      <span className="kz-field-label">{label}</span>
      <Select
        className="nodrag"
        showSearch
        value={typeof value === 'string' && value ? value : undefined}
        placeholder={`Choose ${label.toLowerCase()}`}
        onChange={(v: string) => update((d) => ({ selectedAddonsValue: { ...d.selectedAddonsValue, [name]: v } }))}
        options={options.map((o) => ({ ...o, 'data-testid': `addon-option-${name}-${o.value}` }))}
        data-testid={`addon-${id}-${name}`}
      />
    </div>
  );
}
