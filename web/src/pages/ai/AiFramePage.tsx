import { Alert, Skeleton, Typography } from 'antd';
import { ApiError, errorMessage } from '../../api/client';
import { $api } from '../../api/typed';

/** /chatflows, /agentflows, /tools: the AI host's page in a frame (camera and microphone allowed). */
export function AiFramePage({ widget, title }: { widget: 'chatflows' | 'agentflows' | 'tools'; title: string }) {
  const details = $api.useQuery('get', '/api/v1/widgets/details/{widget_id}', { params: { path: { widget_id: widget } } }, { retry: false });
  let body;
  if (details.isPending) body = <Skeleton active />;
  else if (details.data) {
    body = <iframe className="kz-ai-frame" title={title} src={details.data.url} allow="camera; microphone" data-testid="ai-frame" />;
  } else {
    const notConfigured = details.error instanceof ApiError && details.error.body.key === 'AI_HOST_NOT_CONFIGURED';
    body = (
      <Alert
        type={notConfigured ? 'info' : 'error'}
        showIcon
        data-testid="ai-not-configured"
        message={notConfigured ? 'No AI host is configured' : `${title} could not be loaded`}
        description={
          notConfigured
            ? `${title} come from an AI host (a Flowise server). Your administrator sets KONNECTZ_AI_HOST_URL and KONNECTZ_AI_HOST_SECRET on the api to show them here.`
            : errorMessage(details.error, 'Something went wrong!')
        }
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
