import type { NodeProps } from '@xyflow/react';
import { type ComponentType, memo } from 'react';
import type { FlowNode, FlowNodeData } from '../../model/types';
import { NodeCard } from './NodeCard';

/** The body of a kind's card: its fields, given the node's id and data. */
export type CardBody = ComponentType<{ id: string; data: FlowNodeData }>;

/** A kind's card that is its body in the common NodeCard frame (header, account, test, status). */
export function bodyNode(Body: CardBody, name: string): ComponentType<NodeProps<FlowNode>> {
  function BodyNodeView({ id, data, selected }: NodeProps<FlowNode>) {
    return (
      <NodeCard id={id} data={data} selected={selected}>
        <Body id={id} data={data} />
      </NodeCard>
    );
  }
  BodyNodeView.displayName = name;
  return memo(BodyNodeView);
}
