/** The join card: wait for all paths or any path, the paths it joins, and + for the step after it (its definition is kind.tsx). */
import { PlusOutlined } from '@ant-design/icons';
import type { NodeProps } from '@xyflow/react';
import { Button, Select, Tag, Typography } from 'antd';
import { memo } from 'react';
import { useEditor, useEditorStoreApi } from '../../EditorContext';
import { nextLink, routerOfJoin, routerPaths, type JoinWait } from '../../model/paths';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { WAIT_LABELS } from './kind';

function JoinNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const store = useEditorStoreApi();
  const wait: JoinWait = data.joinWait ?? 'all';
  const names = useEditor((s) => routerPaths(routerOfJoin(s, id)).map((p) => p.name).join('\u0000'));
  const hasNext = useEditor((s) => Boolean(nextLink(s, id)));
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-join-wait">
        <Typography.Text strong>Then</Typography.Text>
        <Select
          className="nodrag"
          style={{ width: '100%' }}
          value={wait}
          onChange={(joinWait: JoinWait) => update({ joinWait })}
          options={(Object.keys(WAIT_LABELS) as JoinWait[]).map((w) => ({ value: w, label: WAIT_LABELS[w], 'data-testid': `join-wait-option-${w}` }))}
          data-testid={`join-wait-${id}`}
        />
      </div>
      <div data-testid={`join-paths-${id}`}>
        <Typography.Text type="secondary">Joins: </Typography.Text>
        {names ? names.split('\u0000').map((n) => <Tag key={n}>{n}</Tag>) : <Typography.Text type="secondary">no router</Typography.Text>}
      </div>
      <Button
        size="small"
        icon={<PlusOutlined />}
        onClick={() => store.getState().setAddTarget({ after: id, handle: null })}
        data-testid={`join-add-step-${id}`}
      >
        {hasNext ? 'Insert step after the join' : 'Add step after the join'}
      </Button>
    </NodeCard>
  );
}

export default memo(JoinNodeView);
