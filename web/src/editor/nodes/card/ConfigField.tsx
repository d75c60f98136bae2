import { AutoComplete } from 'antd';
import { RefInput } from '../../components/RefInput';
import type { ConfigResponse } from '../../model/types';

interface Props {
  nodeId: string;
  field: ConfigResponse;
  onChange: (value: string) => void;
  onSelect: (value: string) => void;
  onOpen: () => void;
}

/** One configuration field: a select that also accepts free text, or a text field with '@' references. */
export function ConfigField({ nodeId, field, onChange, onSelect, onOpen }: Props) {
  const value = field.value === undefined || field.value === null ? '' : String(field.value);
  const testId = `config-${nodeId}-${field.config_key}`;
  // A chosen option shows its name ("Launch"), not the id the step stores ("1"); free text shows as typed.
  const chosen = (field.options ?? []).find((o) => String(o.id) === value);
  return (
    <div className="kz-field">
      <span className="kz-field-label">
        {field.label || field.config_key}
        {field.config_key_required && <span className="kz-required">*</span>}
      </span>
      {field.type === 'select' ? (
        <AutoComplete
          className="nodrag"
          value={chosen ? chosen.name : value}
          title={chosen ? `${chosen.name} (${chosen.id})` : undefined}
          placeholder="Choose or type a value"
          options={(field.options ?? []).map((o) => ({ value: o.id, label: o.name }))}
          filterOption={(input, option) =>
            String(option?.label ?? '').toLowerCase().includes(input.toLowerCase()) || String(option?.value ?? '').toLowerCase().includes(input.toLowerCase())
          }
          onOpenChange={(open) => open && (field.options ?? []).length === 0 && onOpen()}
          onChange={(v: string) => onChange(v)}
          onSelect={(v: string) => onSelect(v)}
          data-testid={testId}
        />
      ) : (
        <RefInput nodeId={nodeId} value={value} onChange={onChange} placeholder="Type @ to use data of earlier steps" testId={testId} />
      )}
      {field.help && (
        <span className="kz-field-help" data-testid={`${testId}-help`}>
          {field.help}
        </span>
      )}
    </div>
  );
}
