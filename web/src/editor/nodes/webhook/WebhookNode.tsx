import type { NodeProps } from '@xyflow/react';
import { Button, Typography } from 'antd';
import { memo, useState } from 'react';
import { CopyButton } from '../../../lib/CopyButton';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeTest } from '../card/useNodeTest';

export const WEBHOOK_URL_MISSING = 'Test the trigger or click Capture Response to get its webhook URL';

/** Default instructions (HTML strings) when the app gives none. */
export const WEBHOOK_INSTRUCTIONS = [
  'Send a <b>POST</b> request with a JSON body (or form data) to this URL.',
  'Click <b>Capture Response</b>, then send one request: its data becomes this step&#39;s sample output.',
  'Reference its keys in later steps by typing <b>@</b> in a field.',
];

function WebhookNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const url = data.app_detail.webhook_url;
  const { capture } = useNodeTest(id);
  const [busy, setBusy] = useState(false);
  const instructions = data.app_detail.webhook_instructions?.length ? data.app_detail.webhook_instructions : WEBHOOK_INSTRUCTIONS;
  const onCapture = async () => {
    setBusy(true);
    try {
      await capture();
    } finally {
      setBusy(false);
    }
  };
  return (
    <NodeCard
      id={id}
      data={data}
      selected={selected}
      actions={
        <Button block loading={busy || data.app_status.type === 'Loading'} onClick={() => void onCapture()} data-testid={`capture-${id}`}>
          Capture Response
        </Button>
      }
    >
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
        {instructions.map((html, i) => (
          // Instructions are HTML strings of the app definition (ours, not user input).
          <li key={i} dangerouslySetInnerHTML={{ __html: html }} />
        ))}
      </ul>
    </NodeCard>
  );
}

export const WebhookNode = memo(WebhookNodeView);
