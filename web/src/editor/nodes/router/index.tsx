/** The router card: its mode and its paths (name, Otherwise, conditions), each with its own handle and + (its definition is kind.tsx). */
import { DeleteOutlined, MergeCellsOutlined, PlusOutlined } from '@ant-design/icons';
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { Button, Input, Select, Space, Switch, Tooltip, Typography } from 'antd';
import { memo } from 'react';
import { useToast } from '../../../lib/useToast';
import { listApps } from '../../api/editorApi';
import { useEditor, useEditorStoreApi } from '../../EditorContext';
import { MAX_PATHS, joinOf, pathNameRefusal, pathNodes, type RouterMode, type RouterPath } from '../../model/paths';
import { TOAST_MS } from '../../model/rules';
import type { FlowNode } from '../../model/types';
import { ConditionsEditor } from '../filter/ConditionsEditor';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { MODE_LABELS } from './kind';

function PathBox({ routerId, path, paths, index, steps }: { routerId: string; path: RouterPath; paths: RouterPath[]; index: number; steps: number }) {
  const { update } = useNodeUpdate(routerId);
  const store = useEditorStoreApi();
  const setPath = (patch: Partial<RouterPath>, coalesce?: string) =>
    update((d) => ({ routerPaths: (d.routerPaths ?? []).map((p) => (p.id === path.id ? { ...p, ...patch } : p)) }), coalesce);
  const nameProblem = pathNameRefusal(paths, path.id, path.name);
  const otherwiseTaken = paths.some((p) => p.otherwise && p.id !== path.id);
  const key = `${routerId}-${path.id}`;
  return (
    <div className="kz-router-path" data-testid={`path-${key}`} style={{ position: 'relative' }}>
      <Space.Compact block>
        <Input
          className="nodrag"
          value={path.name}
          maxLength={40}
          status={nameProblem ? 'error' : undefined}
          onChange={(e) => setPath({ name: e.target.value }, `name-${path.id}`)}
          aria-label={`Name of path ${index + 1}`}
          data-testid={`path-name-${key}`}
        />
        {paths.length > 1 && (
          <Tooltip title={steps > 0 ? 'Remove the path and its steps' : 'Remove the path'}>
            <Button
              icon={<DeleteOutlined />}
              onClick={() => store.getState().dispatch({ type: 'removePath', router: routerId, path: path.id })}
              aria-label={`Remove path ${path.name}`}
              data-testid={`path-remove-${key}`}
            />
          </Tooltip>
        )}
      </Space.Compact>
      {nameProblem && (
        <Typography.Text type="danger" data-testid={`path-name-error-${key}`}>
          {nameProblem}
        </Typography.Text>
      )}
      <div className="kz-router-otherwise">
        <Switch
          size="small"
          checked={path.otherwise}
          disabled={!path.otherwise && otherwiseTaken}
          onChange={(otherwise) => setPath({ otherwise, conditions: otherwise ? [] : path.conditions })}
          data-testid={`path-otherwise-${key}`}
        />{' '}
        <Typography.Text type="secondary">Otherwise (runs when no other path matches)</Typography.Text>
      </div>
      {!path.otherwise && (
        <ConditionsEditor nodeId={routerId} testKey={key} conditions={path.conditions} onChange={(conditions, c) => setPath({ conditions }, c)} />
      )}
      <div className="kz-router-path-foot">
        <Typography.Text type="secondary" data-testid={`path-steps-${key}`}>
          {steps === 0 ? 'No steps yet' : `${steps} step${steps === 1 ? '' : 's'}`}
        </Typography.Text>
        <Button
          size="small"
          icon={<PlusOutlined />}
          onClick={() => store.getState().setAddTarget({ after: routerId, handle: path.id })}
          data-testid={`path-add-step-${key}`}
        >
          Add step
        </Button>
      </div>
      <Handle type="source" id={path.id} position={Position.Right} className="kz-path-handle" style={{ right: -17 }} />
    </div>
  );
}

function RouterNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const store = useEditorStoreApi();
  const toast = useToast();
  const paths: RouterPath[] = data.routerPaths ?? [];
  const mode: RouterMode = data.routerMode ?? 'parallel';
  const stepCounts = useEditor((s) => paths.map((p) => pathNodes(s, id, p.id).length).join(','));
  const joined = useEditor((s) => Boolean(joinOf(s, id)));
  const counts = stepCounts.split(',').map(Number);

  const joinPaths = async () => {
    try {
      const reply = await listApps('addOns', 'join', 20);
      const app = reply.apps?.find((a) => a.provider === 'join');
      if (!app) {
        void toast.warning('The Join add-on is not in the catalogue.', TOAST_MS / 1000);
        return;
      }
      store.getState().dispatch({ type: 'joinPaths', router: id, app });
    } catch {
      void toast.warning('The Join add-on could not be loaded. Please try again.', TOAST_MS / 1000);
    }
  };

  return (
    <NodeCard id={id} data={data} selected={selected} noSourceHandle>
      <div className="kz-router-mode">
        <Typography.Text strong>Run</Typography.Text>
        <Select
          className="nodrag"
          style={{ width: '100%' }}
          value={mode}
          onChange={(routerMode: RouterMode) => update({ routerMode })}
          options={(Object.keys(MODE_LABELS) as RouterMode[]).map((m) => ({ value: m, label: MODE_LABELS[m], 'data-testid': `router-mode-option-${m}` }))}
          data-testid={`router-mode-${id}`}
        />
      </div>
      {paths.map((p, i) => (
        <PathBox key={p.id} routerId={id} path={p} paths={paths} index={i} steps={counts[i] ?? 0} />
      ))}
      <Space wrap>
        <Button
          size="small"
          icon={<PlusOutlined />}
          disabled={paths.length >= MAX_PATHS}
          onClick={() => store.getState().dispatch({ type: 'addPath', router: id })}
          data-testid={`router-add-path-${id}`}
        >
          Add path
        </Button>
        {!joined && (
          <Tooltip title="Adds a Join where every path ends; the steps after it see every path's outputs">
            <Button size="small" icon={<MergeCellsOutlined />} onClick={() => void joinPaths()} data-testid={`router-join-${id}`}>
              Join paths
            </Button>
          </Tooltip>
        )}
      </Space>
    </NodeCard>
  );
}

export default memo(RouterNodeView);
