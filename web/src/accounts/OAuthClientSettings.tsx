/**
 * Bring your own OAuth app: the OAuth2 client of one app, in its Manage Accounts drawer.
 *
 * GET /api/v1/apps/{app_id}/oauth_client says whether the server has a client for the app, where it
 * comes from and whether the caller may change it (an administrator, named by the installer with
 * KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant`; never inferred from being the first or
 * only user). An administrator enters the client id and secret (PUT
 * /api/v1/admin/oauth_clients/{app_id}; stored encrypted, the secret is never shown again: the field
 * says "•••••• stored" and sending it empty keeps it) with the redirect URL to register shown and
 * copyable. A client set by KONNECTZ_OAUTH_CLIENTS wins and is shown read-only. Everyone else sees,
 * when nothing is configured, what to ask for and who can configure it (the server's who_can_configure:
 * how the installer names administrators).
 *
 *   <OAuthClientSettings app={app} />
 */
import { useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Form, Input, Popconfirm, Space, Typography } from 'antd';
import { useState } from 'react';
import { $api, errorMessage } from '../api/typed';
import type { components } from '../api/schema';
import { useToast } from '../lib/useToast';
import { MSG_SOMETHING_WRONG } from './constants';
import type { ManagedApp } from './manageable';

export type OAuthClientStatus = components['schemas']['OAuthClientOut'];

export const OAUTH_CLIENT_PATH = '/api/v1/apps/{app_id}/oauth_client';
const ADMIN_PATH = '/api/v1/admin/oauth_clients/{app_id}';
export const ENV_VARIABLE = 'KONNECTZ_OAUTH_CLIENTS';
export const SECRET_MASK = '••••••';

/** The not-configured text for someone who cannot configure it: what to ask for. */
export function notConfiguredText(app: ManagedApp, status: OAuthClientStatus): string {
  const token = status.token_method ? ` Meanwhile you can connect with a ${status.token_method.toLowerCase()}.` : '';
  return (
    `${app.name} is not configured for OAuth2 on this server. Ask your administrator to enter the client id and ` +
    `secret of an OAuth app registered with ${app.name} here (Applications › ${app.name} › Manage Accounts), ` +
    `or to set ${ENV_VARIABLE} on the api.${token}`
  );
}

/** ``text`` with its `backticked` parts (a command, a variable) shown as code. */
function withCode(text: string) {
  return text.split('`').map((part, i) =>
    i % 2 === 1 ? (
      <Typography.Text code key={i}>
        {part}
      </Typography.Text>
    ) : (
      part
    ),
  );
}

/** The app's OAuth client status (shared by the drawer's buttons and this component). */
export function useOAuthClientStatus(app: ManagedApp, enabled: boolean) {
  return $api.useQuery(
    'get',
    OAUTH_CLIENT_PATH,
    { params: { path: { app_id: app.id } } },
    { enabled: enabled && app.auth_type === 'OAuth2', retry: false },
  );
}

interface ClientFormValues {
  client_id: string;
  client_secret?: string;
}

export function OAuthClientSettings({ app, status }: { app: ManagedApp; status: OAuthClientStatus }) {
  const toast = useToast();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(!status.configured);
  const [form] = Form.useForm<ClientFormValues>();
  const save = $api.useMutation('put', ADMIN_PATH);
  const remove = $api.useMutation('delete', ADMIN_PATH);
  const path = { params: { path: { app_id: app.id } } };

  const stored = (data: OAuthClientStatus) => {
    queryClient.setQueryData($api.queryOptions('get', OAUTH_CLIENT_PATH, path).queryKey, data);
  };

  if (!status.can_configure) {
    if (status.configured) return null;
    return (
      <Alert
        data-testid="oauth-not-configured"
        type="warning"
        showIcon
        title={notConfiguredText(app, status)}
        description={<span data-testid="oauth-who-can-configure">{withCode(status.who_can_configure)}</span>}
      />
    );
  }

  const redirect = (
    <Typography.Paragraph data-testid="oauth-redirect-url" style={{ marginBottom: 8 }}>
      Redirect URL to register with {app.name}:{' '}
      <Typography.Text code copyable={{ text: status.redirect_url, tooltips: ['Copy', 'Copied'] }}>
        {status.redirect_url}
      </Typography.Text>
    </Typography.Paragraph>
  );

  if (status.source === 'environment')
    return (
      <div data-testid="oauth-client-settings" className="kz-oauth-client">
        <Typography.Paragraph type="secondary">
          {app.name}&apos;s OAuth app (client id <Typography.Text code>{status.client_id}</Typography.Text>) is set by{' '}
          <Typography.Text code>{ENV_VARIABLE}</Typography.Text> on the server, which wins over this form.
        </Typography.Paragraph>
        {redirect}
      </div>
    );

  if (!editing)
    return (
      <div data-testid="oauth-client-settings" className="kz-oauth-client">
        <Typography.Paragraph type="secondary" style={{ marginBottom: 0 }}>
          OAuth app: client id <Typography.Text code>{status.client_id}</Typography.Text>, secret {SECRET_MASK}{' '}
          <Button type="link" size="small" onClick={() => setEditing(true)}>
            Change OAuth app
          </Button>
        </Typography.Paragraph>
      </div>
    );

  const submit = (values: ClientFormValues) => {
    save.mutate(
      { ...path, body: { client_id: values.client_id.trim(), client_secret: (values.client_secret ?? '').trim() } },
      {
        onSuccess: (data) => {
          toast.success(`${app.name}'s OAuth app saved`);
          form.setFieldValue('client_secret', '');
          setEditing(false);
          stored(data);
        },
        onError: (err) => toast.error(errorMessage(err, MSG_SOMETHING_WRONG)),
      },
    );
  };

  const onRemove = () => {
    remove.mutate(path, {
      onSuccess: (data) => {
        toast.success(`${app.name}'s OAuth app removed`);
        setEditing(true);
        form.resetFields();
        stored(data);
      },
      onError: (err) => toast.error(errorMessage(err, MSG_SOMETHING_WRONG)),
    });
  };

  return (
    <div data-testid="oauth-client-settings" className="kz-oauth-client">
      {status.configured ? null : (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 12 }}
          title={`${app.name} is not configured for OAuth2 on this server yet.`}
          description={
            `Register an OAuth app with ${app.name}, then enter its client id and secret here ` +
            `(stored encrypted; ${ENV_VARIABLE} on the api wins when it names this app).`
          }
        />
      )}
      {redirect}
      <Form
        form={form}
        layout="vertical"
        onFinish={submit}
        initialValues={{ client_id: status.client_id ?? '', client_secret: '' }}
        data-testid="oauth-client-form"
      >
        <Form.Item
          name="client_id"
          label="Client ID"
          rules={[{ required: true, whitespace: true, message: 'Client ID is required' }]}
        >
          <Input autoComplete="off" />
        </Form.Item>
        <Form.Item
          name="client_secret"
          label="Client Secret"
          rules={status.configured ? [] : [{ required: true, whitespace: true, message: 'Client Secret is required' }]}
          extra={status.configured ? `${SECRET_MASK} stored; type to replace` : undefined}
        >
          <Input.Password autoComplete="new-password" placeholder={status.configured ? SECRET_MASK : undefined} />
        </Form.Item>
        <Space>
          <Button type="primary" htmlType="submit" loading={save.isPending}>
            Save OAuth app
          </Button>
          {status.configured ? (
            <>
              <Button onClick={() => setEditing(false)}>Cancel</Button>
              <Popconfirm
                title={`Remove ${app.name}'s OAuth app? New accounts cannot be connected through OAuth until one is entered again.`}
                okText="Remove"
                cancelText="Cancel"
                onConfirm={onRemove}
              >
                <Button danger loading={remove.isPending}>
                  Remove
                </Button>
              </Popconfirm>
            </>
          ) : null}
        </Space>
      </Form>
    </div>
  );
}
