import { DeleteOutlined } from '@ant-design/icons';
import { Button, Input, Select, Space, Tag } from 'antd';
import { RefInput } from '../../components/RefInput';
import { FILTER_OPERATORS, VALUELESS_OPERATORS } from '../../model/rules';
import type { FilterCondition } from '../../model/types';
import { addCondition, blankCondition, removeCondition, updateCondition } from './conditions';

interface Props {
  /** The node whose '@' references the fields offer (the node's upstream steps). */
  nodeId: string;
  conditions: FilterCondition[] | undefined;
  /** The new list; `coalesce` groups typing in one field into one undo step. */
  onChange: (next: FilterCondition[], coalesce?: string) => void;
  /** Test ids say `<what>-<testKey>-<index>` (the filter: its node id; a router's path: `<node id>-<path id>`). */
  testKey: string;
}

/** Conditions joined with +And / +OR (the filter's, also each path of a router). */
export function ConditionsEditor({ nodeId, conditions, onChange, testKey }: Props) {
  const list: FilterCondition[] = conditions?.length ? conditions : [blankCondition()];
  const key = testKey;
  return (
    <>
      {list.map((c, i) => (
        <div className="kz-condition" key={c.id} data-testid={`condition-${key}-${i}`}>
          <div className="kz-condition-row">
            <div className="kz-condition-field">
              <RefInput
                nodeId={nodeId}
                value={c.field}
                placeholder="Field: type @ to choose"
                onChange={(field) => onChange(updateCondition(list, c.id, { field }), `f${c.id}`)}
                testId={`condition-field-${key}-${i}`}
              />
            </div>
            {i > 0 && (
              <Button type="text" danger icon={<DeleteOutlined />} onClick={() => onChange(removeCondition(list, c.id))} aria-label="Delete condition" data-testid={`condition-delete-${key}-${i}`} />
            )}
          </div>
          <Space.Compact block>
            <Select
              className="nodrag"
              style={{ width: '50%' }}
              placeholder="Operator"
              value={c.operator || undefined}
              onChange={(operator: string) => onChange(updateCondition(list, c.id, { operator }))}
              options={FILTER_OPERATORS.map((o) => ({ value: o, label: o, 'data-testid': `operator-option-${o}` }))}
              data-testid={`condition-operator-${key}-${i}`}
            />
            {!VALUELESS_OPERATORS.has(c.operator) && (
              <Input
                className="nodrag"
                style={{ width: '50%' }}
                placeholder="Value"
                value={c.valueOfFilter}
                onChange={(e) => onChange(updateCondition(list, c.id, { valueOfFilter: e.target.value }), `v${c.id}`)}
                data-testid={`condition-value-${key}-${i}`}
              />
            )}
          </Space.Compact>
          {c.joinWith && <Tag className="kz-join">{c.joinWith}</Tag>}
        </div>
      ))}
      <Space>
        <Button size="small" onClick={() => onChange(addCondition(list, 'AND'))} data-testid={`condition-and-${key}`}>
          +And
        </Button>
        <Button size="small" onClick={() => onChange(addCondition(list, 'OR'))} data-testid={`condition-or-${key}`}>
          +OR
        </Button>
        <Button size="small" type="text" onClick={() => onChange(removeCondition(list, list[list.length - 1].id))} data-testid={`condition-remove-last-${key}`}>
          Remove last
        </Button>
      </Space>
    </>
  );
}
