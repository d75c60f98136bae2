import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { DataForwarderBody } from '../dataForwarder/DataForwarderBody';
import { ApiBody } from './ApiBody';

/** The Api node type: the API call or the data forwarder. */
function ApiNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      {data.app_detail.provider === 'data_forwarder' ? <DataForwarderBody id={id} data={data} /> : <ApiBody id={id} data={data} />}
    </NodeCard>
  );
}

export const ApiNode = memo(ApiNodeView);
