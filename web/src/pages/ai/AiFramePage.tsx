import { Alert, Skeleton, Typography } from 'antd';
import { $api, errorMessage } from '../../api/typed';

/** What to run for the AI frames on a development machine (the optional Flowise AI host). */
export const START_AI_HOST = 'make dev AI=flowise';

/**
 * /chatflows, /agentflows, /tools: the AI host's page in a frame (camera and microphone allowed).
 * Without an AI host the api answers 200 with `configured: false` (no error in the console) and
 * the page says what to start.
 */
export function AiFramePage({ widget, title }: { widget: 'chatflows' | 'agentflows' | 'tools'; title: string }) {
  const details = $api.useQuery('get', '/api/v1/widgets/details/{widget_id}', { params: { path: { widget_id: widget } } }, { retry: false });
  let body;
  if (details.isPending) body = <Skeleton active />;
  else if (details.data?.configured && details.data.url) {
    body = <iframe className="kz-ai-frame" title={title} src={details.data.url} allow="camera; microphone" data-testid="ai-frame" />;
  } else if (details.data) {
    body = (
      <Alert
        type="info"
        showIcon
        data-testid="ai-not-configured"
        message="No AI host is configured"
        description={
          <>
            <Typography.Paragraph>
              {title} come from an AI host (a Flowise server). On a development machine start Konnectz with it:{' '}
              <Typography.Text code copyable data-testid="ai-start-command">
                {START_AI_HOST}
              </Typography.Text>{' '}
              (install it once with <Typography.Text code>make ai-host</Typography.Text>).
            </Typography.Paragraph>
            <Typography.Paragraph style={{ marginBottom: 0 }}>
              Elsewhere your administrator sets KONNECTZ_AI_HOST_URL and KONNECTZ_AI_HOST_SECRET on the api.
            </Typography.Paragraph>
          </>
        }
      />
    );
  } else {
    body = (
      <Alert
        type="error"
        showIcon
        data-testid="ai-failed"
        message={`${title} could not be loaded`}
        description={errorMessage(details.error, 'Something went wrong!')}
      />
    );
  }
  return (
    <div className="kz-page kz-ai-page">
      <Typography.Title level={3}>{title}</Typography.Title>
      {body}
    </div>
  );
}
