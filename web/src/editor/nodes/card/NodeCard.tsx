import { Handle, Position } from '@xyflow/react';
import { useState, type ReactNode } from 'react';
import { ManageAccountsDrawer } from '../../../accounts';
import type { FlowNodeData } from '../../model/types';
import { DelayDrawer } from './DelayDrawer';
import { Header } from './Header';
import { OnErrorDrawer } from './OnErrorDrawer';
import { ResponsePanel } from './ResponsePanel';
import { TestSection } from './TestSection';

export const CARD_WIDTH_PX = 450;

interface Props {
  id: string;
  data: FlowNodeData;
  selected?: boolean;
  children?: ReactNode;
  /** Hide the Test & Review button (nodes that test another way). */
  noTest?: boolean;
  /** Extra buttons beside Test & Review (Capture Response). */
  actions?: ReactNode;
  /** No plain source handle on the right (the router: one handle per path, in its body). */
  noSourceHandle?: boolean;
}

/** The 450 px card every node shares: header, body, Test & Review and the response panel. */
export function NodeCard({ id, data, selected, children, noTest, actions, noSourceHandle }: Props) {
  const [delay, setDelay] = useState(false);
  const [accounts, setAccounts] = useState(false);
  const [onError, setOnError] = useState(false);
  const trigger = data.app_detail.app_index === 1;
  const status = data.app_status.type.toLowerCase();
  return (
    <div
      className={`kz-node kz-shadow-${status}${selected ? ' kz-node-selected' : ''}`}
      style={{ width: CARD_WIDTH_PX }}
      data-testid={`node-${id}`}
      data-kind={data.app_detail.provider}
    >
      {!trigger && <Handle type="target" position={Position.Left} />}
      <Header id={id} data={data} selected={selected} onManage={() => setAccounts(true)} onDelay={() => setDelay(true)} onError={() => setOnError(true)} />
      {/* Fields are edited, not dragged: the card moves by its header. */}
      <div className="kz-node-body nodrag">
        {children}
        {(!noTest || actions) && (
          <div className="kz-node-actions">
            {actions}
            {!noTest && <TestSection id={id} data={data} />}
          </div>
        )}
        <ResponsePanel id={id} data={data} />
      </div>
      {!noSourceHandle && <Handle type="source" position={Position.Right} />}
      {delay && <DelayDrawer id={id} open={delay} onClose={() => setDelay(false)} />}
      {onError && <OnErrorDrawer id={id} open={onError} onClose={() => setOnError(false)} />}
      {accounts && <ManageAccountsDrawer app={data.app_detail} appIndex={data.app_detail.app_index} open={accounts} onClose={() => setAccounts(false)} />}
    </div>
  );
}
