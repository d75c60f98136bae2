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

/** An option of an add-on's select: shown in words, its code id (when given) as secondary text. */
export interface AddonOption {
  value: string;
  label: string;
  hint?: string;
}

/** An option's look in the list: the words, then the code id in grey (its tooltip too). */
function optionContent(o: AddonOption) {
  return (
    <span className="kz-option" title={o.hint}>
      <span>{o.label}</span>
      {o.hint && <span className="kz-option-hint">{o.hint}</span>}
    </span>
  );
}

type Group = { label: string; options: AddonOption[] };

export function AddonSelect({ id, data, name, label, options }: { id: string; data: FlowNodeData; name: string; label: string; options: (AddonOption | Group)[] }) {
  const { update } = useNodeUpdate(id);
  const value = data.selectedAddonsValue?.[name];
  const leaf = (o: AddonOption) => ({ value: o.value, label: o.label, hint: o.hint, title: o.hint ?? o.label, 'data-testid': `addon-option-${name}-${o.value}` });
  const items = options.map((o) => ('options' in o ? { label: o.label, title: o.label, options: o.options.map(leaf) } : leaf(o)));
  const chosen = options.flatMap((o) => ('options' in o ? o.options : [o])).find((o) => o.value === value);
  return (
    <div className="kz-field">
      <span className="kz-field-label">{label}</span>
      <Select
        className="nodrag"
        virtual={false}
        showSearch={{
          filterOption: (input, option) => {
            const o = option as { label?: string; value?: string } | undefined;
            return `${o?.label ?? ''} ${o?.value ?? ''}`.toLowerCase().includes(input.trim().toLowerCase());
          },
        }}
        value={typeof value === 'string' && value ? value : undefined}
        title={chosen?.hint}
        placeholder={`Choose ${label.toLowerCase()}`}
        onChange={(v: string) => update((d) => ({ selectedAddonsValue: { ...d.selectedAddonsValue, [name]: v } }))}
        options={items}
        optionRender={(o) => optionContent(o.data as AddonOption)}
        data-testid={`addon-${id}-${name}`}
      />
    </div>
  );
}
