import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { KindDefinition } from '../../kinds';
import type { FlowNode, KeyValue } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { DataForwarderBody } from './DataForwarderBody';

export interface DataForwarderData {
  keyList?: KeyValue[];
}

declare module '../../model/types' {
  interface NodeKindMap {
    Api: true;
  }
  interface KindDataMap {
    data_forwarder: DataForwarderData;
  }
}

function DataForwarderNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <DataForwarderBody id={id} data={data} />
    </NodeCard>
  );
}

/** The data forwarder add-on: forwards chosen keys (an Api node type, like the API call). */
const dataForwarder: KindDefinition<'data_forwarder'> = {
  kind: 'dataForwarder',
  providers: ['data_forwarder'],
  nodeType: 'Api',
  component: memo(DataForwarderNodeView),
  label: { name: 'Data Forwarder', description: 'Forwards chosen keys and values.' },
  fixedEvent: { id: 'forward', name: 'Forward Data' },
  initialData: () => ({ keyList: [{ key: '', value: '' }] }),
};

export default dataForwarder;
