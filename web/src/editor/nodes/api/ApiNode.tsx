import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { ApiBody } from './ApiBody';

/** The API call's card. */
function ApiNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <ApiBody id={id} data={data} />
    </NodeCard>
  );
}

export const ApiNode = memo(ApiNodeView);
