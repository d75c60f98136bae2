import type { NodeProps } from '@xyflow/react';
import { Typography } from 'antd';
import { memo } from 'react';
import type { FlowNode } from '../model/types';
import { NodeCard } from './NodeCard';

/** Trigger and action apps of the catalogue without a dedicated card yet. */
function AppNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <Typography.Text type="secondary">
        {data.app_detail.side === 'left' ? 'Trigger' : 'Action'}: {data.app_detail.name}. Events and accounts for this app are coming soon.
      </Typography.Text>
    </NodeCard>
  );
}

export const AppNode = memo(AppNodeView);
