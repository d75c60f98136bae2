import type { NodeProps } from '@xyflow/react';
import { Button, InputNumber, Select, Typography } from 'antd';
import { memo, useState } from 'react';
import { CopyButton } from '../../../lib/CopyButton';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeTest } from '../card/useNodeTest';
import { useNodeUpdate } from '../card/useNodeUpdate';

export const WEBHOOK_URL_MISSING = 'Test the trigger or click Capture Response to get its webhook URL';

/** Default instructions (HTML strings) when the app gives none. */
export const WEBHOOK_INSTRUCTIONS = [
  'Send a <b>POST</b> request with a JSON body (or form data) to this URL.',
  'Click <b>Capture Response</b>, then send one request: its data becomes this step&#39;s sample output.',
  'Reference its keys in later steps by typing <b>@</b> in a field.',
];

/** When the caller is answered (docs/webhook-response.md): the trigger's `respond`. */
export const RESPOND_OPTIONS = [
  { value: 'at_once', label: 'At once (200 with the run id)' },
  { value: 'when_done', label: 'When the run ends' },
  { value: 'step', label: 'Using a Respond step' },
].map((o) => ({ ...o, 'data-testid': `webhook-respond-option-${o.value}` }));
export const RESPOND_TIMEOUT_DEFAULT = 30;
export const RESPOND_TIMEOUT_MAX = 120;

function WebhookNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const url = data.app_detail.webhook_url;
  const { capture } = useNodeTest(id);
  const { update } = useNodeUpdate(id);
  const values = data.selectedAddonsValue ?? {};
  const respond = typeof values.respond === 'string' ? values.respond : 'at_once';
  const timeout = typeof values.respond_timeout_seconds === 'number' ? values.respond_timeout_seconds : RESPOND_TIMEOUT_DEFAULT;
  const setValue = (key: string, value: unknown) =>
    update((d) => ({ selectedAddonsValue: { ...(d.selectedAddonsValue ?? {}), [key]: value } }), `respond-${key}`);
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
      {data.app_detail.provider === 'webhook' && (
        <div className="kz-field" data-testid={`webhook-respond-field-${id}`}>
          <span className="kz-field-label">Respond</span>
          <Select
            className="nodrag"
            value={respond}
            onChange={(value: string) => setValue('respond', value)}
            options={RESPOND_OPTIONS}
            data-testid={`webhook-respond-${id}`}
          />
          {respond !== 'at_once' && (
            <>
              <span className="kz-field-label">Wait for the answer at most (seconds)</span>
              <InputNumber
                className="nodrag"
                min={1}
                max={RESPOND_TIMEOUT_MAX}
                precision={0}
                value={timeout}
                onChange={(value) => setValue('respond_timeout_seconds', value ?? RESPOND_TIMEOUT_DEFAULT)}
                data-testid={`webhook-respond-timeout-${id}`}
              />
              <span className="kz-field-hint">
                Past it, or when the run waits (a Delay), the caller gets 202 with the run id.
              </span>
            </>
          )}
        </div>
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
