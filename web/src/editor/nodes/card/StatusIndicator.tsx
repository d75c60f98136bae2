import { CheckCircleFilled, CloseCircleFilled, LoadingOutlined } from '@ant-design/icons';
import { Tooltip } from 'antd';
import type { FlowNodeData } from '../../model/types';

/**
 * Loading (a test in flight) shows a spinner, Success a green check, Error an error icon; a step
 * never tested (Draft) shows its number and a static 'Not tested' prompt, never a spinner.
 */
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
    <Tooltip title={`Step ${data.app_detail.app_index}: not tested yet. Press Test & Review to test it.`}>
      <span className="kz-status-untested" data-testid={`status-${data.node_id}`} data-status={status}>
        <span className="kz-step">{data.app_detail.app_index}</span>
        <span className="kz-untested-label">Not tested</span>
      </span>
    </Tooltip>
  );
}
