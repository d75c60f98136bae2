import { Input } from 'antd';
import { useState } from 'react';
import { useEditor } from '../EditorContext';

export const FLOW_NAME_PLACEHOLDER = 'Enter the name of the flow';
export const FLOW_NAME_DEFAULT = 'Name of the Flow';

/** Click-to-edit flow name: reads 'Name of the Flow' until the user names it. */
export function FlowNameInput() {
  const name = useEditor((s) => s.flowName);
  const setFlowName = useEditor((s) => s.setFlowName);
  const [editing, setEditing] = useState(false);
  return (
    <Input
      variant={editing ? 'outlined' : 'borderless'}
      className="kz-flow-name"
      value={name}
      placeholder={editing ? FLOW_NAME_PLACEHOLDER : FLOW_NAME_DEFAULT}
      onFocus={() => setEditing(true)}
      onBlur={() => setEditing(false)}
      onPressEnter={(e) => e.currentTarget.blur()}
      onChange={(e) => setFlowName(e.target.value)}
      maxLength={120}
      aria-label="Name of the Flow"
      data-testid="flow-name"
    />
  );
}
