import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { KindDefinition } from '../../kinds';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { SplitterBody } from './SplitterBody';

export interface SplitterData {
  /** The kept segment: an index of SPLITTER_SEGMENTS (First by default). */
  inHouseAppConfig?: { segmentIndex?: number };
}

declare module '../../model/types' {
  interface NodeKindMap {
    InHouse: true;
  }
  interface KindDataMap {
    splitter: SplitterData;
  }
}

function SplitterNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <SplitterBody id={id} data={data} />
    </NodeCard>
  );
}

/** The splitter add-on: splits a text and keeps one segment. */
const splitter: KindDefinition<'splitter'> = {
  kind: 'splitter',
  providers: ['splitter'],
  nodeType: 'InHouse',
  component: memo(SplitterNodeView),
  label: { name: 'Splitter', description: 'Splits a text and keeps a segment.' },
  fixedEvent: { id: 'split', name: 'Split Text' },
  initialData: () => ({ inHouseAppConfig: { segmentIndex: 0 } }),
};

export default splitter;
