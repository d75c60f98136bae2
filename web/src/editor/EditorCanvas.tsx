import { Background, Controls, MiniMap, ReactFlow, useReactFlow, type Connection, type Edge } from '@xyflow/react';
import { Typography } from 'antd';
import { useEffect, useMemo, useState } from 'react';
import { useToast } from '../lib/useToast';
import { useTheme } from '../theme/theme';
import type { AppOut } from './api/editorApi';
import { ActionDrawer, type DrawerMode } from './components/ActionDrawer';
import { AppPicker } from './components/AppPicker';
import { edgeTypes } from './components/DeletableEdge';
import { Tools } from './components/Tools';
import { useEditor, useEditorShallow, useEditorStoreApi } from './EditorContext';
import { triggerMovedBackward } from './model/moves';
import { insertRefusal, isTriggerNode, linkRefusal } from './model/operations';
import { MSG, TOAST_MS } from './model/rules';
import type { FlowLink, FlowNode } from './model/types';
import { nodeTypes } from './nodes/nodeTypes';
import { addRefusal, isTriggerOnly } from './nodes/registry';

export const MIN_ZOOM = 0.3;
export const MAX_ZOOM = 2;

/** Edge state: error when its target failed, animated once its source was tested. */
export function edgeClass(link: FlowLink, apps: FlowNode[], selected: boolean): string {
  const target = apps.find((n) => n.id === link.target);
  const source = apps.find((n) => n.id === link.source);
  if (target?.data.app_status.type === 'Error') return 'kz-edge-error';
  if (selected) return 'kz-edge-selected';
  if (source?.data.app_status.type === 'Success') return 'kz-edge-animated';
  return '';
}

function TriggerChooser() {
  const dispatch = useEditor((s) => s.dispatch);
  return (
    <div className="kz-choose-trigger">
      <Typography.Title level={3}>Choose Trigger</Typography.Title>
      <Typography.Paragraph type="secondary">Select Trigger to create a workflow.</Typography.Paragraph>
      <AppPicker listings={['triggers']} onPick={(app) => dispatch({ type: 'addTrigger', app })} placeholder="Search in 1000+ applications" searchTestId="trigger-picker-search" />
    </div>
  );
}

/** Ctrl+Z undoes, Ctrl+Shift+Z (or Ctrl+Y) redoes, except while typing in a field. */
function useUndoKeys() {
  const store = useEditorStoreApi();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      const el = e.target as HTMLElement | null;
      if (el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.isContentEditable)) return;
      const key = e.key.toLowerCase();
      if (key === 'z' && !e.shiftKey) store.getState().undo();
      else if ((key === 'z' && e.shiftKey) || key === 'y') store.getState().redo();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store]);
}

export function EditorCanvas() {
  const mode = useTheme((s) => s.mode);
  const toast = useToast();
  const store = useEditorStoreApi();
  const { apps, links, onNodesChange, beginDrag, dispatch } = useEditorShallow((s) => ({
    apps: s.apps,
    links: s.links,
    onNodesChange: s.onNodesChange,
    beginDrag: s.beginDrag,
    dispatch: s.dispatch,
  }));
  const [drawerMode, setDrawer] = useState<DrawerMode | null>(null);
  // A router path's + or a join's + opens the drawer for a step there.
  const addTarget = useEditor((s) => s.addTarget);
  const drawer: DrawerMode | null = drawerMode ?? (addTarget ? 'actions' : null);
  const closeDrawer = () => {
    setDrawer(null);
    store.getState().setAddTarget(null);
  };
  const [selectedEdge, setSelectedEdge] = useState<string | null>(null);
  const [eagle, setEagle] = useState(false);
  const { fitView, setCenter } = useReactFlow();
  useUndoKeys();
  const edges = useMemo<Edge[]>(
    () =>
      links.map((l) => {
        const className = edgeClass(l, apps, l.id === selectedEdge);
        return {
          id: l.id,
          source: l.source,
          target: l.target,
          sourceHandle: l.sourceHandle,
          targetHandle: l.targetHandle,
          type: 'deletable',
          selected: l.id === selectedEdge,
          animated: className === 'kz-edge-animated',
          className,
        };
      }),
    [links, apps, selectedEdge],
  );
  const hasTrigger = apps.some(isTriggerNode);

  const pickAction = (app: AppOut) => {
    if (isTriggerOnly(app.provider)) return;
    const state = store.getState();
    const target = state.addTarget;
    const refused = addRefusal(state.apps, app.provider) ?? insertRefusal(state, app, target?.after, target?.handle);
    if (refused) {
      void toast.warning(refused, TOAST_MS / 1000);
      return;
    }
    dispatch(target ? { type: 'addAction', app, after: target.after, handle: target.handle } : { type: 'addAction', app });
    closeDrawer();
    // Bring the new card to the middle at full size once React Flow has measured it.
    const added = store.getState().apps[store.getState().apps.length - 1];
    window.setTimeout(() => void setCenter(added.position.x + 225, added.position.y + 250, { zoom: 1, duration: 200 }), 50);
  };

  const connect = (c: Connection) => {
    const refusal = linkRefusal(store.getState(), c.source, c.target);
    if (refusal) {
      void toast.warning(refusal, TOAST_MS / 1000);
      return;
    }
    dispatch({ type: 'addLink', source: c.source, target: c.target, sourceHandle: c.sourceHandle ?? null, targetHandle: c.targetHandle ?? null });
  };

  const endDrag = () => {
    if (triggerMovedBackward(store.getState().apps)) {
      store.getState().cancelDrag();
      void toast.warning(MSG.moveBackward, TOAST_MS / 1000);
      return;
    }
    store.getState().endDrag();
  };

  return (
    <div className="kz-canvas" data-testid="editor-canvas">
      <ReactFlow
        nodes={apps}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onNodeDragStart={beginDrag}
        onNodeDragStop={endDrag}
        onConnect={connect}
        onEdgeClick={(_, edge) => setSelectedEdge(edge.id)}
        onPaneClick={() => setSelectedEdge(null)}
        minZoom={MIN_ZOOM}
        maxZoom={MAX_ZOOM}
        zoomOnDoubleClick={false}
        deleteKeyCode={null}
        colorMode={mode}
        fitView
        fitViewOptions={{ maxZoom: 1, padding: 0.2 }}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} />
        <Controls showZoom={false} showFitView={false} showInteractive={false} position="bottom-left" />
        {eagle && (
          <MiniMap
            pannable
            zoomable
            position="bottom-right"
            bgColor={mode === 'dark' ? '#0f2147' : '#ffffff'}
            maskColor={mode === 'dark' ? 'rgba(11, 26, 58, 0.6)' : undefined}
            nodeColor={mode === 'dark' ? '#2f6bff' : '#b8c7ff'}
            data-testid="eagle-eye-map"
          />
        )}
      </ReactFlow>
      {!hasTrigger && <TriggerChooser />}
      <Tools
        canAdd={hasTrigger}
        onAddAction={() => setDrawer('actions')}
        onAddOns={() => setDrawer('addOns')}
        onEagleEye={() => {
          setEagle((v) => !v);
          void fitView({ padding: 0.2, duration: 200 });
        }}
      />
      <ActionDrawer
        mode={drawer}
        onClose={closeDrawer}
        onPick={pickAction}
        apps={apps}
      />
    </div>
  );
}
