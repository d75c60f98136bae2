import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { KindDefinition } from '../../kinds';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { DelayBody } from './DelayBody';

function DelayNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <DelayBody id={id} data={data} />
    </NodeCard>
  );
}

declare module '../../model/types' {
  interface NodeKindMap {
    InHouse: true;
  }
}

/** The delay add-on (older drafts: timer): waits before the next step; it has no Set Delay of its own. */
const delay: KindDefinition = {
  kind: 'delay',
  providers: ['delay'],
  legacyProviders: ['timer'],
  nodeType: 'InHouse',
  component: memo(DelayNodeView),
  label: { name: 'Delay', description: 'Waits before the next step.' },
  fixedEvent: { id: 'delay', name: 'Delay' },
  timer: false,
};

export default delay;
