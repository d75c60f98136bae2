/**
 * HOOK POINT — the Manage Accounts drawer (web/src/accounts/, branch `apps`) plugs in here.
 * Until it is merged this shows the node's linked accounts read-only with the spec's empty texts.
 */
import { useQuery } from '@tanstack/react-query';
import { Drawer, Empty, List } from 'antd';
import { accountName } from '../../../lib/names';
import { authorizedAccounts } from '../../api/editorApi';
import type { FlowNodeData } from '../../model/types';

export const ACCOUNTS_TITLE = '- Manage Accounts';

export function ManageAccountsHook({ data, open, onClose }: { data: FlowNodeData; open: boolean; onClose: () => void }) {
  const appId = data.app_detail.id;
  const accounts = useQuery({ queryKey: ['editor-accounts', appId], queryFn: () => authorizedAccounts(appId), enabled: open });
  const list = accounts.data?.authorized_app_accounts ?? [];
  return (
    <Drawer open={open} onClose={onClose} title={ACCOUNTS_TITLE} size={380} destroyOnHidden>
      {list.length === 0 ? (
        <Empty description={<>No Account Found.<br />Please add an account to continue.</>} />
      ) : (
        <List dataSource={list} renderItem={(a) => <List.Item key={a.id}>{accountName(a.name)}</List.Item>} />
      )}
    </Drawer>
  );
}
