import { CheckCircleFilled, CloseCircleFilled, DeleteOutlined } from '@ant-design/icons';
import { Button, Tooltip } from 'antd';
import { Handle, Position } from '@xyflow/react';
import type { ReactNode } from 'react';
import { nodeCardName } from '../../lib/names';
import { useToast } from '../../lib/useToast';
import { useEditorStoreApi } from '../EditorContext';
import { isTriggerNode } from '../model/operations';
import type { FlowNodeData } from '../model/types';
import { AppIcon } from '../components/AppIcon';

export const TRIGGER_DELETE_BLOCKED = 'Cannot delete Trigger while Action present.';

function StatusIndicator({ data }: { data: FlowNodeData }) {
  const status = data.app_status.type;
  if (status === 'Success')
    return (
      <Tooltip title={data.app_status.errorMessage || 'Tested'}>
        <CheckCircleFilled className="kz-status-ok" />
      </Tooltip>
    );
  if (status === 'Error')
    return (
      <Tooltip title={data.app_status.errorMessage || 'Error'}>
        <CloseCircleFilled className="kz-status-error" />
      </Tooltip>
    );
  return (
    <Tooltip title={status === 'Loading' ? 'Not tested yet' : 'Step'}>
      <span className={`kz-step kz-step-${status.toLowerCase()}`}>{data.app_detail.app_index}</span>
    </Tooltip>
  );
}

interface Props {
  id: string;
  data: FlowNodeData;
  selected?: boolean;
  children: ReactNode;
}

/** The 450 px card every node shares: header (icon, name, status, delete) and body. */
export function NodeCard({ id, data, selected, children }: Props) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const trigger = data.app_detail.app_index === 1;

  const remove = () => {
    const { apps, dispatch } = store.getState();
    const node = apps.find((n) => n.id === id);
    if (node && isTriggerNode(node) && apps.length > 1) {
      void toast.warning(TRIGGER_DELETE_BLOCKED);
      return;
    }
    dispatch({ type: 'removeNode', id });
  };

  return (
    <div className={`kz-node${selected ? ' kz-node-selected' : ''}`} data-testid={`node-${id}`}>
      {!trigger && <Handle type="target" position={Position.Left} />}
      <div className="kz-node-header">
        <AppIcon name={data.app_detail.name} provider={data.app_detail.provider} imageUrl={data.app_detail.image_url} size={28} />
        <Tooltip title={data.app_detail.name}>
          <span className="kz-node-title">{nodeCardName(data.app_detail.name)}</span>
        </Tooltip>
        {data.selectedEvent && <span className="kz-node-event">{data.selectedEvent.name}</span>}
        <span className="kz-node-spacer" />
        <StatusIndicator data={data} />
        <Tooltip title="Delete">
          <Button className="nodrag" size="small" type="text" icon={<DeleteOutlined />} onClick={remove} aria-label="Delete node" data-testid={`node-delete-${id}`} />
        </Tooltip>
      </div>
      {/* Fields are edited, not dragged: the card moves by its header. */}
      <div className="kz-node-body nodrag">{children}</div>
      <Handle type="source" position={Position.Right} />
    </div>
  );
}
