import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { DelayBody } from '../delay/DelayBody';
import { IteratorBody } from '../iterator/IteratorBody';
import { SplitterBody } from '../splitter/SplitterBody';

/** In-house add-ons without a node type of their own: splitter, iterator, delay. */
function InHouseNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const provider = data.app_detail.provider;
  return (
    <NodeCard id={id} data={data} selected={selected}>
      {provider === 'splitter' && <SplitterBody id={id} data={data} />}
      {provider === 'iterator' && <IteratorBody id={id} data={data} />}
      {(provider === 'delay' || provider === 'timer') && <DelayBody id={id} data={data} />}
    </NodeCard>
  );
}

export const InHouseNode = memo(InHouseNodeView);
