import { useQuery } from '@tanstack/react-query';
import { Alert, Button, Collapse, Select } from 'antd';
import { useState } from 'react';
import { ManageAccountsDrawer } from '../../../accounts';
import { $api } from '../../../api/typed';
import { useEditorStoreApi } from '../../EditorContext';
import { appEvents } from '../../api/editorApi';
import { MSG } from '../../model/rules';
import type { FlowNodeData } from '../../model/types';
import { useConfigLoader } from './useConfigLoader';

/** Catalogue apps with an auth type need an account before their configuration loads. */
export function needsAccount(data: FlowNodeData): boolean {
  return data.app_detail.app_type === 'api' && Boolean(data.app_detail.auth_type) && data.app_detail.auth_type !== 'none';
}

/** Choose an event and an account (collapsible); choosing either clears the configuration. */
export function EventAccountSection({ id, data }: { id: string; data: FlowNodeData }) {
  const store = useEditorStoreApi();
  const { load } = useConfigLoader(id);
  const appId = data.app_detail.id;
  const side = data.app_detail.side;
  const account = needsAccount(data);
  const events = useQuery({ queryKey: ['editor-events', appId, side], queryFn: () => appEvents(appId, side) });
  // The same query as the Manage Accounts drawer's: an account added there shows here at once.
  const accounts = $api.useQuery(
    'get',
    '/api/v1/apps/{app_id}/authorized_app_accounts',
    { params: { path: { app_id: appId } } },
    { enabled: account },
  );
  const [manage, setManage] = useState(false);
  const accountList = accounts.data?.authorized_app_accounts ?? [];

  const choose = (patch: Partial<FlowNodeData>) => {
    const node = store.getState().apps.find((n) => n.id === id);
    if (!node) return;
    store.getState().dispatch({
      type: 'updateNodeData',
      id,
      patch: {
        ...patch,
        configResponses: [],
        response_payload: null,
        app_status: { ...node.data.app_status, type: 'Draft', errorMessage: undefined },
      },
    });
    const next = store.getState().apps.find((n) => n.id === id)?.data;
    if (next?.selectedEvent && (!account || next.selectedAccount)) void load();
  };

  const body = (
    <div className="kz-section">
      {events.isError && <Alert type="error" showIcon title={MSG.noEvents} />}
      <div className="kz-field">
        <span className="kz-field-label">Event</span>
        <Select
          className="nodrag"
          placeholder="Choose an event"
          loading={events.isPending}
          value={data.selectedEvent?.id}
          onChange={(value: string) => {
            const ev = events.data?.app_events.find((e) => e.id === value);
            if (ev) choose({ selectedEvent: { id: ev.id, name: ev.name } });
          }}
          options={(events.data?.app_events ?? []).map((e) => ({ value: e.id, label: e.name, 'data-testid': `event-option-${e.id}` }))}
          data-testid={`event-select-${id}`}
        />
      </div>
      {account && (
        <div className="kz-field">
          <span className="kz-field-label">Account</span>
          <Select
            className="nodrag"
            placeholder="Choose an account"
            loading={accounts.isPending}
            value={data.selectedAccount?.id}
            onChange={(value: number) => {
              const a = accountList.find((x) => x.id === value);
              if (a) choose({ selectedAccount: { id: a.id, name: a.name } });
            }}
            options={accountList.map((a) => ({ value: a.id, label: a.name, 'data-testid': `account-option-${a.id}` }))}
            data-testid={`account-select-${id}`}
          />
          {accounts.isSuccess && accountList.length === 0 && (
            <Alert
              type="warning"
              showIcon
              title={data.app_detail.app_index === 1 ? MSG.noAccountsTrigger : MSG.noAccountsAction}
              data-testid={`no-accounts-${id}`}
            />
          )}
          <Button size="small" onClick={() => setManage(true)} data-testid={`manage-accounts-${id}`}>
            Manage Accounts
          </Button>
          {manage && (
            <ManageAccountsDrawer app={data.app_detail} appIndex={data.app_detail.app_index} open={manage} onClose={() => setManage(false)} />
          )}
        </div>
      )}
    </div>
  );
  return (
    <Collapse
      size="small"
      className="kz-collapse"
      activeKey={data.app_status.collapseEventAccount ? [] : ['ev']}
      onChange={() =>
        store.getState().patchNode(id, { app_status: { ...data.app_status, collapseEventAccount: !data.app_status.collapseEventAccount } })
      }
      items={[{ key: 'ev', label: 'Event and account', children: body }]}
    />
  );
}
