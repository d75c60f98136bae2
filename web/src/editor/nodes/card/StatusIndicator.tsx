import { CheckCircleFilled, CloseCircleFilled, LoadingOutlined } from '@ant-design/icons';
import { Tooltip } from 'antd';
import type { FlowNodeData } from '../../model/types';

/** Draft shows the step number, Loading a spinner, Success a green check, Error an error icon. */
export function StatusIndicator({ data }: { data: FlowNodeData }) {
  const status = data.app_status.type;
  const message = data.app_status.errorMessage;
  if (status === 'Success')
    return (
      <Tooltip title={message || 'Tested'}>
        <CheckCircleFilled className="kz-status-ok" data-testid={`status-${data.node_id}`} data-status="Success" />
      </Tooltip>
    );
  if (status === 'Error')
    return (
      <Tooltip title={message || 'Error'}>
        <CloseCircleFilled className="kz-status-error" data-testid={`status-${data.node_id}`} data-status="Error" />
      </Tooltip>
    );
  if (status === 'Loading')
    return (
      <Tooltip title="Loading">
        <LoadingOutlined className="kz-status-loading" data-testid={`status-${data.node_id}`} data-status="Loading" />
      </Tooltip>
    );
  return (
    <Tooltip title={`Step ${data.app_detail.app_index}`}>
      <span className="kz-step" data-testid={`status-${data.node_id}`} data-status={status}>
        {data.app_detail.app_index}
      </span>
    </Tooltip>
  );
}
