import { DeleteOutlined } from '@ant-design/icons';
import type { NodeProps } from '@xyflow/react';
import { Button, Input, Select, Space, Tag } from 'antd';
import { memo } from 'react';
import { RefInput } from '../../components/RefInput';
import { FILTER_OPERATORS, VALUELESS_OPERATORS } from '../../model/rules';
import type { FilterCondition, FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { addCondition, blankCondition, removeCondition, updateCondition } from './conditions';

/** Filter: conditions joined with +And / +OR; the flow continues only when they hold. */
function FilterNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const list: FilterCondition[] = data.filterValues?.length ? data.filterValues : [blankCondition()];
  const set = (next: FilterCondition[], key?: string) => update({ filterValues: next }, key);
  return (
    <NodeCard id={id} data={data} selected={selected}>
      {list.map((c, i) => (
        <div className="kz-condition" key={c.id} data-testid={`condition-${id}-${i}`}>
          <div className="kz-condition-row">
            <div className="kz-condition-field">
              <RefInput
                nodeId={id}
                value={c.field}
                placeholder="Field: type @ to choose"
                onChange={(field) => set(updateCondition(list, c.id, { field }), `f${c.id}`)}
                testId={`condition-field-${id}-${i}`}
              />
            </div>
            {i > 0 && (
              <Button type="text" danger icon={<DeleteOutlined />} onClick={() => set(removeCondition(list, c.id))} aria-label="Delete condition" data-testid={`condition-delete-${id}-${i}`} />
            )}
          </div>
          <Space.Compact block>
            <Select
              className="nodrag"
              style={{ width: '50%' }}
              placeholder="Operator"
              value={c.operator || undefined}
              onChange={(operator: string) => set(updateCondition(list, c.id, { operator }))}
              options={FILTER_OPERATORS.map((o) => ({ value: o, label: o, 'data-testid': `operator-option-${o}` }))}
              data-testid={`condition-operator-${id}-${i}`}
            />
            {!VALUELESS_OPERATORS.has(c.operator) && (
              <Input
                className="nodrag"
                style={{ width: '50%' }}
                placeholder="Value"
                value={c.valueOfFilter}
                onChange={(e) => set(updateCondition(list, c.id, { valueOfFilter: e.target.value }), `v${c.id}`)}
                data-testid={`condition-value-${id}-${i}`}
              />
            )}
          </Space.Compact>
          {c.joinWith && <Tag className="kz-join">{c.joinWith}</Tag>}
        </div>
      ))}
      <Space>
        <Button size="small" onClick={() => set(addCondition(list, 'AND'))} data-testid={`condition-and-${id}`}>
          +And
        </Button>
        <Button size="small" onClick={() => set(addCondition(list, 'OR'))} data-testid={`condition-or-${id}`}>
          +OR
        </Button>
        <Button size="small" type="text" onClick={() => set(removeCondition(list, list[list.length - 1].id))} data-testid={`condition-remove-last-${id}`}>
          Remove last
        </Button>
      </Space>
    </NodeCard>
  );
}

export const FilterNode = memo(FilterNodeView);
