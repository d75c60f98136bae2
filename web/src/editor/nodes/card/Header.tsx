import { ClockCircleOutlined, CloseOutlined, DeleteOutlined, ExceptionOutlined, ReloadOutlined, SettingOutlined } from '@ant-design/icons';
import { Button, Tooltip } from 'antd';
import type { ReactNode } from 'react';
import { nodeCardName } from '../../../lib/names';
import { useToast } from '../../../lib/useToast';
import { AppIcon } from '../../components/AppIcon';
import { manageRefusal } from '../../../accounts';
import { useEditor } from '../../EditorContext';
import { pathOf } from '../../model/paths';
import { MSG, TOAST_MS } from '../../model/rules';
import type { FlowNodeData } from '../../model/types';
import { kindIcon, kindOf, supportsTimer } from '../registry';
import { hasOnError } from './OnErrorDrawer';
import { StatusIndicator } from './StatusIndicator';
import { useNodeActions } from './useNodeActions';

function HeaderButton({ title, icon, onClick, testId }: { title: string; icon: ReactNode; onClick: () => void; testId: string }) {
  return (
    <Tooltip title={title}>
      <Button className="nodrag" size="small" type="text" icon={icon} onClick={onClick} aria-label={title} data-testid={testId} />
    </Tooltip>
  );
}

/** What the card does, in words, beside its name: an add-on's chosen operation, else the chosen event. */
export function nodeSummary(data: FlowNodeData): string | null {
  return kindOf(data)?.summary?.(data) || data.selectedEvent?.name || null;
}

interface Props {
  id: string;
  data: FlowNodeData;
  selected?: boolean;
  onManage: () => void;
  onDelay: () => void;
  onError: () => void;
}

/** Steps that can fail and so have an error policy: every action, not the trigger, a router or a join. */
const NO_ON_ERROR = new Set(['router', 'join']);

/** Icon, name cut beyond 13 (11 + '..'), status, Manage App, Set Delay, On Error, Refresh, Delete, deselect. */
export function Header({ id, data, selected, onManage, onDelay, onError }: Props) {
  const toast = useToast();
  const { remove, refresh, deselect } = useNodeActions(id);
  const name = data.app_detail.name;
  const summary = nodeSummary(data);
  // The trigger cannot be deleted while an action exists: its Delete says so.
  const lockedTrigger = useEditor((s) => data.app_detail.app_index === 1 && s.apps.length > 1);
  // A step on a router's path has no Set Delay (no delay inside a path, docs/paths.md).
  const onPath = useEditor((s) => Boolean(pathOf(s, id)));
  const manage = () => {
    const refusal = manageRefusal(data.app_detail, data.app_detail.app_index);
    if (refusal) void toast.error(refusal, TOAST_MS / 1000);
    else onManage();
  };
  return (
    <div className="kz-node-header">
      <AppIcon name={name} provider={data.app_detail.provider} imageUrl={data.app_detail.image_url} size={28} icon={kindIcon(data.app_detail.provider)} />
      <Tooltip title={name}>
        <span className="kz-node-title" data-testid={`node-title-${id}`}>
          {nodeCardName(name)}
        </span>
      </Tooltip>
      {summary && (
        <span className="kz-node-event" data-testid={`node-summary-${id}`}>
          {summary}
        </span>
      )}
      <span className="kz-node-spacer" />
      <StatusIndicator data={data} />
      <HeaderButton title="Manage App" icon={<SettingOutlined />} onClick={manage} testId={`node-manage-${id}`} />
      {supportsTimer(data) && !onPath && (
        <HeaderButton
          title="Set Delay"
          icon={<ClockCircleOutlined className={data.delayReady ? 'kz-delay-set' : undefined} />}
          onClick={onDelay}
          testId={`node-delay-${id}`}
        />
      )}
      {data.app_detail.app_index !== 1 && !NO_ON_ERROR.has(data.app_detail.provider) && (
        <HeaderButton
          title="On Error"
          icon={<ExceptionOutlined className={hasOnError(data.onError) ? 'kz-on-error-set' : undefined} />}
          onClick={onError}
          testId={`node-on-error-${id}`}
        />
      )}
      <HeaderButton title="Refresh" icon={<ReloadOutlined />} onClick={refresh} testId={`node-refresh-${id}`} />
      <HeaderButton
        title={lockedTrigger ? MSG.triggerDeleteHint : 'Delete'}
        icon={<DeleteOutlined />}
        onClick={() => void remove()}
        testId={`node-delete-${id}`}
      />
      {selected && <HeaderButton title="Deselect" icon={<CloseOutlined />} onClick={deselect} testId={`node-deselect-${id}`} />}
    </div>
  );
}
