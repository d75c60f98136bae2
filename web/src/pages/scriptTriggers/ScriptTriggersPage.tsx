/**
 * /script-triggers/:scriptId: the popup of a custom-script trigger (canvas spec §4 Trigger
 * handling). It shows the script the user installs in the app (platform, steps, the source with the
 * konnect's webhook URL filled in, a Copy button) and its status, polled every 3 s while WAITING:
 * each poll keeps the draft's URL listening, and the script's first request turns it RECEIVED.
 * Closing the window (Close, or the window's own control) lets the editor, which polls the popup
 * every second, reset the trigger's flag and test the trigger again.
 */
import { Alert, Button, Card, Result, Space, Spin, Tag, Typography } from 'antd';
import { useParams } from 'react-router';
import { $api, errorMessage } from '../../api/typed';
import { CopyButton } from '../../lib/CopyButton';

/** How often the page asks whether the script's first request arrived. */
export const SCRIPT_STATUS_POLL_MS = 3000;

/** Closing the popup (a seam: jsdom cannot close windows). */
export const scriptWindow = { close: () => window.close() };

function validId(raw: string | undefined): number | null {
  return raw && /^\d{1,18}$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

function ScriptTrigger({ scriptId }: { scriptId: number }) {
  const query = $api.useQuery(
    'get',
    '/api/v1/script_triggers/{script_id}',
    { params: { path: { script_id: scriptId } } },
    { refetchInterval: (q) => (q.state.data?.status === 'RECEIVED' || q.state.error ? false : SCRIPT_STATUS_POLL_MS), retry: false },
  );
  const close = (
    <Button type="primary" onClick={() => scriptWindow.close()} data-testid="script-close">
      Close
    </Button>
  );
  if (query.isPending) return <Spin size="large" className="kz-editor-loading" />;
  if (query.isError || !query.data) {
    return <Result status="warning" title={errorMessage(query.error, 'Could not load the script.')} extra={close} />;
  }
  const s = query.data;
  const received = s.status === 'RECEIVED';
  return (
    <Card
      className="kz-script-page"
      title={`${s.app_name} — ${s.event_label}`}
      extra={
        <Tag color={received ? 'success' : 'processing'} data-testid="script-status">
          {s.status}
        </Tag>
      }
    >
      <div className="kz-script-body">
        <Alert type={received ? 'success' : 'info'} showIcon title={s.display_message} data-testid="script-message" />
        <Typography.Title level={5} style={{ margin: 0 }}>
          Install this {s.platform}
        </Typography.Title>
        <ol className="kz-script-steps" data-testid="script-steps">
          {s.install.map((step) => (
            <li key={step}>{step}</li>
          ))}
        </ol>
        <div className="kz-script-source-head">
          <Typography.Text strong>Script</Typography.Text>
          <CopyButton text={s.source} testId="script-copy" size="small" />
        </div>
        <pre className="kz-script-source" data-testid="script-source">
          {s.source}
        </pre>
        {received && (
          <>
            <Typography.Text strong>Received</Typography.Text>
            <pre className="kz-script-source" data-testid="script-received">
              {JSON.stringify(s.raw_response, null, 2)}
            </pre>
          </>
        )}
        <Space>
          {close}
          <Typography.Text type="secondary">Close this window to use the received data in the flow.</Typography.Text>
        </Space>
      </div>
    </Card>
  );
}

export function ScriptTriggersPage() {
  const { scriptId } = useParams<{ scriptId: string }>();
  const id = validId(scriptId);
  return (
    <div className="kz-script-popup">
      {id === null ? <Result status="404" title="No such script." /> : <ScriptTrigger scriptId={id} />}
    </div>
  );
}
