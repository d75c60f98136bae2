import {
  AppstoreAddOutlined,
  EyeOutlined,
  PlusCircleOutlined,
  RedoOutlined,
  UndoOutlined,
  ZoomInOutlined,
  ZoomOutOutlined,
} from '@ant-design/icons';
import { Button, Tooltip } from 'antd';
import { useReactFlow } from '@xyflow/react';
import type { ReactNode } from 'react';
import { useEditor } from '../EditorContext';

function Tool({ title, icon, onClick, disabled, testId }: { title: string; icon: ReactNode; onClick: () => void; disabled?: boolean; testId: string }) {
  return (
    <Tooltip title={title} placement="left">
      <Button shape="circle" icon={icon} onClick={onClick} disabled={disabled} aria-label={title} data-testid={testId} />
    </Tooltip>
  );
}

/** Floating tools on the right of the canvas. */
export function Tools({ onAddAction, onAddOns, onEagleEye, canAdd }: { onAddAction: () => void; onAddOns: () => void; onEagleEye: () => void; canAdd: boolean }) {
  const { zoomIn, zoomOut } = useReactFlow();
  const canUndo = useEditor((s) => s.past.length > 0);
  const canRedo = useEditor((s) => s.future.length > 0);
  const undo = useEditor((s) => s.undo);
  const redo = useEditor((s) => s.redo);
  return (
    <div className="kz-tools">
      <Tool title="Add-Ons" icon={<AppstoreAddOutlined />} onClick={onAddOns} disabled={!canAdd} testId="add-ons" />
      <Tool title="Add Action" icon={<PlusCircleOutlined />} onClick={onAddAction} disabled={!canAdd} testId="add-action" />
      <Tool title="Zoom Out" icon={<ZoomOutOutlined />} onClick={() => void zoomOut()} testId="zoom-out" />
      <Tool title="Zoom In" icon={<ZoomInOutlined />} onClick={() => void zoomIn()} testId="zoom-in" />
      <Tool title="Undo" icon={<UndoOutlined />} onClick={undo} disabled={!canUndo} testId="undo" />
      <Tool title="Redo" icon={<RedoOutlined />} onClick={redo} disabled={!canRedo} testId="redo" />
      <Tool title="Eagle Eye" icon={<EyeOutlined />} onClick={onEagleEye} testId="eagle-eye" />
    </div>
  );
}
