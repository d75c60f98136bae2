import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { ConditionsEditor } from './ConditionsEditor';

/** Filter: conditions joined with +And / +OR; the flow continues only when they hold. */
function FilterNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <ConditionsEditor nodeId={id} testKey={id} conditions={data.filterValues} onChange={(next, key) => update({ filterValues: next }, key)} />
    </NodeCard>
  );
}

export const FilterNode = memo(FilterNodeView);
