import type { NodeProps } from '@xyflow/react';
import { Typography } from 'antd';
import { memo } from 'react';
import { CopyButton } from '../../lib/CopyButton';
import type { FlowNode } from '../model/types';
import { NodeCard } from './NodeCard';

export const WEBHOOK_URL_MISSING = 'Save the flow to get its webhook URL';

function WebhookNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const url = data.app_detail.webhook_url;
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field-label">Webhook URL</div>
      {url ? (
        <div className="kz-webhook-url nodrag">
          <Typography.Text code className="kz-url-text" data-testid="webhook-url">
            {url}
          </Typography.Text>
          <CopyButton size="small" text={url} testId="webhook-copy" />
        </div>
      ) : (
        <Typography.Text type="secondary" data-testid="webhook-url-missing">
          {WEBHOOK_URL_MISSING}
        </Typography.Text>
      )}
      <ul className="kz-instructions">
        <li>Send a POST request with a JSON body to this URL.</li>
        <li>
          The JSON body is the output of this step: reference its keys in later steps as{' '}
          <code>{`{{${id}.key}}`}</code> (type @ in a field).
        </li>
        <li>The URL only receives requests once the flow is published.</li>
      </ul>
    </NodeCard>
  );
}

export const WebhookNode = memo(WebhookNodeView);
