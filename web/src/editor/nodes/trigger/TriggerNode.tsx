import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { AppNodeBody } from './AppNodeBody';

/** A catalogue app starting the flow (left side). */
function TriggerNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AppNodeBody id={id} data={data} />
    </NodeCard>
  );
}

export const TriggerNode = memo(TriggerNodeView);
