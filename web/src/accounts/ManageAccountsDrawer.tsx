/**
 * The Manage Accounts drawer of one app (applications page and canvas node cards).
 *
 * Lists the caller's accounts of the app (names cut beyond 10 characters, full name in a tooltip),
 * renames them inline (update_label), removes them (update_status REMOVE; refused with
 * 'Cannot delete this account as it contains active Konnectz' while a published konnect uses
 * one), and adds one: OAuth2 apps through the popup, token apps through their fields.
 * Opening it for an app that has nothing to manage shows '{app name} is not manageable.' and
 * closes it again. OAuth2 apps also show their OAuth app (OAuthClientSettings: an administrator enters
 * client id and secret, others learn what to ask for; New Account waits until one is configured) and,
 * where the manifest offers one, a second way in: "Use a personal access token" (TokenFieldsForm).
 * Each account shows its rate budget and lets its owner set or clear its own rate (RateBudget).
 *
 *   <ManageAccountsDrawer app={app} appIndex={1} open={open} onClose={close} onAccountsChanged={reload} />
 */
import { DeleteOutlined, KeyOutlined, PlusOutlined } from '@ant-design/icons';
import { useQueryClient } from '@tanstack/react-query';
import { Avatar, Button, Empty, Popconfirm, Space, Spin, Tooltip, Typography } from 'antd';
import { Drawer } from '../lib/Drawer';
import { useEffect, useState } from 'react';
import { $api, ApiError, errorMessage } from '../api/typed';
import type { components } from '../api/schema';
import { accountName } from '../lib/names';
import { useToast } from '../lib/useToast';
import {
  MSG_ADD_ACCOUNT,
  MSG_IN_USE,
  MSG_NO_ACCOUNT,
  MSG_RENAMED,
  MSG_SOMETHING_WRONG,
} from './constants';
import { sameOriginImage } from '../lib/appImage';
import { manageRefusal, type ManagedApp } from './manageable';
import { OAuthClientSettings, useOAuthClientStatus } from './OAuthClientSettings';
import { RateBudget } from './RateBudget';
import { TokenFieldsForm } from './TokenFieldsForm';
import { useOAuthPopup } from './useOAuthPopup';

export type AppAccount = components['schemas']['AppAccountOut'];

const ACCOUNTS_PATH = '/api/v1/apps/{app_id}/authorized_app_accounts';

export interface ManageAccountsDrawerProps {
  app: ManagedApp & { image_url?: string | null };
  /** The node's position on the canvas (1 = trigger); omitted outside the editor. */
  appIndex?: number;
  open: boolean;
  onClose: () => void;
  /** Called with the reloaded list after an account was added, renamed or removed. */
  onAccountsChanged?: (accounts: AppAccount[]) => void;
}

export function ManageAccountsDrawer({ app, appIndex, open, onClose, onAccountsChanged }: ManageAccountsDrawerProps) {
  const toast = useToast();
  const queryClient = useQueryClient();
  const refusal = manageRefusal(app, appIndex);
  /** fields: a token app's form; token: an OAuth2 app's pasted-token form. */
  const [adding, setAdding] = useState<'fields' | 'token' | null>(null);
  const init = { params: { path: { app_id: app.id } } };
  const accounts = $api.useQuery('get', ACCOUNTS_PATH, init, { enabled: open && refusal === null });
  const rename = $api.useMutation('post', '/api/v1/app_users/{account_id}/update_label');
  const remove = $api.useMutation('post', '/api/v1/app_users/{account_id}/update_status');
  const client = useOAuthClientStatus(app, open && refusal === null);
  // Without the status (an older api, an error) New Account behaves as before: the popup says why.
  const oauthMissing = app.auth_type === 'OAuth2' && client.data?.configured === false;
  const tokenMethod = app.auth_type === 'OAuth2' ? (client.data?.token_method ?? null) : null;

  useEffect(() => {
    if (open && refusal !== null) {
      toast.warning(refusal);
      onClose();
    }
  }, [open, refusal, toast, onClose]);

  // closing the drawer drops a half-filled token form (state adjusted while rendering)
  const [wasOpen, setWasOpen] = useState(open);
  if (open !== wasOpen) {
    setWasOpen(open);
    if (!open) setAdding(null);
  }

  const reload = async () => {
    const { queryKey } = $api.queryOptions('get', ACCOUNTS_PATH, init);
    await queryClient.refetchQueries({ queryKey });
    // account_count badges of the app lists
    void queryClient.invalidateQueries({
      predicate: (q) => typeof q.queryKey[1] === 'string' && q.queryKey[1].startsWith('/api/v1/apps') && q.queryKey[1] !== ACCOUNTS_PATH,
    });
    const list = queryClient.getQueryData<{ authorized_app_accounts: AppAccount[] }>(queryKey);
    onAccountsChanged?.(list?.authorized_app_accounts ?? []);
  };

  const popup = useOAuthPopup(() => void reload());

  const newAccount = () => {
    if (app.auth_type === 'OAuth2') {
      if (!popup.open(app.id)) toast.error('The browser blocked the popup. Please allow popups for this site.');
      return;
    }
    setAdding('fields');
  };

  const onRename = (account: AppAccount, value: string) => {
    const label = value.trim();
    if (!label || label === account.name) return;
    rename.mutate(
      { params: { path: { account_id: account.id } }, body: { label } },
      {
        onSuccess: () => {
          toast.success(MSG_RENAMED);
          void reload();
        },
        onError: (err) => toast.error(errorMessage(err, MSG_SOMETHING_WRONG)),
      },
    );
  };

  const onRemove = (account: AppAccount) => {
    remove.mutate(
      { params: { path: { account_id: account.id } }, body: { status: 'REMOVE' } },
      {
        onSuccess: (data) => {
          if (data.message === 'SUCCESS') toast.success(data.details);
          else toast.error(MSG_IN_USE);
          void reload();
        },
        onError: (err) => {
          if (err instanceof ApiError && err.body.message === 'FAILURE') toast.error(MSG_IN_USE);
          else toast.error(errorMessage(err, MSG_SOMETHING_WRONG));
        },
      },
    );
  };

  const list = accounts.data?.authorized_app_accounts ?? [];
  let body;
  if (accounts.isPending) body = <Spin data-testid="accounts-loading" />;
  else if (accounts.isError) body = <Typography.Text type="danger">{errorMessage(accounts.error, MSG_SOMETHING_WRONG)}</Typography.Text>;
  else if (list.length === 0)
    body = (
      <Empty
        data-testid="accounts-empty"
        description={
          <Space orientation="vertical" size={0}>
            <Typography.Text strong>{MSG_NO_ACCOUNT}</Typography.Text>
            <Typography.Text type="secondary">{MSG_ADD_ACCOUNT}</Typography.Text>
          </Space>
        }
      />
    );
  else
    body = (
      <ul data-testid="accounts-list" className="kz-accounts" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
        {list.map((account) => (
          <li
            key={account.id}
            data-testid={`account-${account.id}`}
            style={{ display: 'flex', alignItems: 'center', justifyContent: 'space-between', padding: '10px 0' }}
          >
            <div style={{ minWidth: 0 }}>
              <Tooltip title={account.name.length > 10 ? account.name : undefined}>
                <Typography.Text
                  className="kz-account-name"
                  editable={{
                    text: account.name,
                    maxLength: 255,
                    tooltip: 'Rename',
                    onChange: (value) => onRename(account, value),
                  }}
                >
                  {accountName(account.name)}
                </Typography.Text>
              </Tooltip>
              {account.rate_budget ? <RateBudget budget={account.rate_budget} onChanged={() => void reload()} /> : null}
            </div>
            <Popconfirm title="Remove this account?" okText="Remove" cancelText="Cancel" onConfirm={() => onRemove(account)}>
              <Button
                type="text"
                danger
                icon={<DeleteOutlined />}
                aria-label={`Remove ${account.name}`}
                loading={remove.isPending && remove.variables?.params.path.account_id === account.id}
              />
            </Popconfirm>
          </li>
        ))}
      </ul>
    );

  return (
    <Drawer
      open={open && refusal === null}
      onClose={onClose}
      size={420}
      destroyOnHidden
      title={
        <Space data-testid="manage-accounts-title">
          {sameOriginImage(app.image_url) ? <Avatar size="small" src={sameOriginImage(app.image_url)} shape="square" /> : null}
          <span>{app.name}</span>
          <span>- Manage Accounts</span>
        </Space>
      }
      footer={
        adding ? null : (
          <Space orientation="vertical" style={{ width: '100%' }}>
            <Button type="primary" icon={<PlusOutlined />} onClick={newAccount} block disabled={oauthMissing}>
              New Account
            </Button>
            {tokenMethod ? (
              <Button icon={<KeyOutlined />} onClick={() => setAdding('token')} block data-testid="use-token-method">
                Use a {tokenMethod.toLowerCase()}
              </Button>
            ) : null}
          </Space>
        )
      }
    >
      {app.auth_type === 'OAuth2' && client.data ? (
        <div style={{ marginBottom: 16 }}>
          <OAuthClientSettings app={app} status={client.data} />
        </div>
      ) : null}
      {body}
      {adding ? (
        <div className="kz-account-new">
          <TokenFieldsForm
            app={app}
            method={adding === 'token' ? 'token' : undefined}
            onAdded={() => {
              setAdding(null);
              void reload();
            }}
            onCancel={() => setAdding(null)}
          />
        </div>
      ) : null}
    </Drawer>
  );
}
