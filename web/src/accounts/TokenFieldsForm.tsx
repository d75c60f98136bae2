/**
 * New Account for token apps: the app's fields (POST /api/v1/auth-url answers type `token` with
 * them), one required input each, Add and Cancel. Add posts the values to /api/v1/authorization
 * as `auth_response` (field id to value); the api runs the app's test request before it saves the
 * account. The server's status text is shown for success and failure. With `method="token"` the same
 * form connects an OAuth2 app with a pasted token (GitHub personal access token, Slack bot token).
 */
import { Alert, Button, Form, Input, Space, Spin, Typography } from 'antd';
import { $api, ApiError } from '../api/typed';
import { useToast } from '../lib/useToast';
import { MSG_SOMETHING_WRONG, OAUTH_RESPONSE_PATH } from './constants';
import type { ManagedApp } from './manageable';

export interface TokenFieldsFormProps {
  app: ManagedApp;
  /** Called after the account was saved (reload the list). */
  onAdded: (accountId: number) => void;
  onCancel: () => void;
  /** `token`: an OAuth2 app's second method (a pasted token, its manifest's token_method). */
  method?: 'token';
}

/** The server's status text of a failed add (spec: shown for success and failure). */
export function addFailureText(err: unknown): string {
  if (err instanceof ApiError) {
    const { status, message } = err.body;
    if (typeof status === 'string' && status) return status;
    if (typeof message === 'string' && message) return message;
  }
  return MSG_SOMETHING_WRONG;
}

export function TokenFieldsForm({ app, onAdded, onCancel, method }: TokenFieldsFormProps) {
  const toast = useToast();
  const [form] = Form.useForm<Record<string, string>>();
  const redirectUrl = `${window.location.origin}${OAUTH_RESPONSE_PATH}`;
  const fields = $api.useQuery('post', '/api/v1/auth-url', { body: { app_id: app.id, redirect_url: redirectUrl, method } });
  const add = $api.useMutation('post', '/api/v1/authorization');

  if (fields.isPending) return <Spin data-testid="token-fields-loading" />;
  if (fields.isError)
    return (
      <Space orientation="vertical">
        <Alert type="error" title={addFailureText(fields.error)} />
        <Button onClick={onCancel}>Cancel</Button>
      </Space>
    );

  const submit = (values: Record<string, string>) => {
    const auth_response = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, (v ?? '').trim()]));
    add.mutate(
      { body: { app_id: app.id, redirect_url: redirectUrl, auth_response, method } },
      {
        onSuccess: (data) => {
          toast.success(data.status);
          form.resetFields();
          onAdded(data.app_user_id);
        },
        onError: (err) => {
          toast.error(addFailureText(err));
        },
      },
    );
  };

  return (
    <Form form={form} layout="vertical" onFinish={submit} className="kz-token-fields" data-testid="token-fields-form">
      {fields.data.instructions ? (
        <Typography.Paragraph type="secondary">{fields.data.instructions}</Typography.Paragraph>
      ) : null}
      {(fields.data.fields ?? []).map((field) => (
        <Form.Item
          key={field.id}
          name={field.id}
          label={field.name}
          extra={field.instructions || undefined}
          rules={[{ required: true, whitespace: true, message: `${field.name} is required` }]}
        >
          {field.secret ? <Input.Password autoComplete="off" /> : <Input autoComplete="off" />}
        </Form.Item>
      ))}
      <Space>
        <Button type="primary" htmlType="submit" loading={add.isPending}>
          Add
        </Button>
        <Button onClick={onCancel} disabled={add.isPending}>
          Cancel
        </Button>
      </Space>
    </Form>
  );
}
