import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Input } from 'antd';
import type { KeyValue } from '../model/types';
import { RefInput } from './RefInput';

interface Props {
  nodeId: string;
  label: string;
  items: KeyValue[];
  onChange: (items: KeyValue[]) => void;
  /** data-testid stem: `<stem>-add`, `<stem>-key-<i>`, `<stem>-value-<i>`, `<stem>-remove-<i>`. */
  testId: string;
}

export function KeyValueList({ nodeId, label, items, onChange, testId }: Props) {
  const update = (index: number, patch: Partial<KeyValue>) =>
    onChange(items.map((item, i) => (i === index ? { ...item, ...patch } : item)));

  return (
    <div className="kz-kv">
      <div className="kz-kv-head">
        <span className="kz-field-label">{label}</span>
        <Button
          size="small"
          icon={<PlusOutlined />}
          onClick={() => onChange([...items, { key: '', value: '' }])}
          data-testid={`${testId}-add`}
        >
          Add
        </Button>
      </div>
      {items.map((item, i) => (
        <div className="kz-kv-row" key={i}>
          <Input
            className="nodrag nopan"
            placeholder="Key"
            value={item.key}
            onChange={(e) => update(i, { key: e.target.value })}
            data-testid={`${testId}-key-${i}`}
          />
          <RefInput
            nodeId={nodeId}
            placeholder="Value (type @ to use data of earlier steps)"
            value={item.value}
            onChange={(value) => update(i, { value })}
            testId={`${testId}-value-${i}`}
          />
          <Button
            type="text"
            danger
            icon={<DeleteOutlined />}
            aria-label={`Remove ${label} entry`}
            onClick={() => onChange(items.filter((_, j) => j !== i))}
            data-testid={`${testId}-remove-${i}`}
          />
        </div>
      ))}
    </div>
  );
}
