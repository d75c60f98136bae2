import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { AppNodeBody } from '../trigger/AppNodeBody';

/** A catalogue app's action or search (right side). */
function ActionNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AppNodeBody id={id} data={data} />
    </NodeCard>
  );
}

export const ActionNode = memo(ActionNodeView);
