/** The canvas editor at /create and /create/:id. */
import { HomeOutlined } from '@ant-design/icons';
import {
  Background,
  Controls,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Connection,
  type Edge,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { Button, Modal, Space, Spin, Typography } from 'antd';
import { useEffect, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { errorMessage } from '../api/client';
import { konnectsApi } from '../api/endpoints';
import type { App } from '../api/types';
import { useToast } from '../lib/useToast';
import { ThemeSwitch } from '../shell/ThemeSwitch';
import { useTheme } from '../theme/theme';
import { ActionDrawer, type DrawerMode } from './components/ActionDrawer';
import { AppPicker } from './components/AppPicker';
import { edgeTypes } from './components/DeletableEdge';
import { FlowNameInput } from './components/FlowNameInput';
import { Tools } from './components/Tools';
import { EditorProvider, useEditor, useEditorShallow, useEditorStoreApi } from './EditorContext';
import { fromCanvasJson, isLoadableCanvas } from './model/canvas';
import { isTriggerNode } from './model/operations';
import { nodeTypes } from './nodes/nodeTypes';
import { buildSaveRequest, NO_TRIGGER_WARNING } from './save';
import { useAppList } from './useAppLists';

export const MIN_ZOOM = 0.3;
export const MAX_ZOOM = 2;
export const SAVE_PROMPT = 'Do You Want to Save the Flow?';

function TriggerChooser() {
  const triggers = useAppList('triggers', true);
  const dispatch = useEditor((s) => s.dispatch);
  return (
    <div className="kz-choose-trigger">
      <Typography.Title level={3}>Choose Trigger</Typography.Title>
      <Typography.Paragraph type="secondary">Select Trigger to create a workflow.</Typography.Paragraph>
      <AppPicker
        apps={triggers}
        onPick={(app) => dispatch({ type: 'addTrigger', app })}
        placeholder="Search in 1000+ applications"
        searchTestId="trigger-picker-search"
      />
    </div>
  );
}

function useSaveFlow() {
  const store = useEditorStoreApi();
  const toast = useToast();
  const navigate = useNavigate();
  const [saving, setSaving] = useState<'save' | 'publish' | null>(null);

  const save = async (publish: boolean): Promise<boolean> => {
    const body = buildSaveRequest(store.getState(), publish);
    if (!body) {
      void toast.warning(NO_TRIGGER_WARNING);
      return false;
    }
    setSaving(publish ? 'publish' : 'save');
    try {
      if (body.konnect_id === null) {
        // Saving needs a tested trigger: its Test & Review creates the konnect and its id.
        const trigger = body.canvas_json.apps.find((n) => n.data.app_detail.app_index === 1);
        const tested = await konnectsApi.testAndReview({
          node_id: trigger?.id ?? null,
          konnect_id: null,
          canvas_json: body.canvas_json,
        });
        body.konnect_id = tested.konnect_id;
      }
      const res = await (publish ? konnectsApi.publish(body) : konnectsApi.save(body));
      void toast.success(res.message || (publish ? 'Flow published.' : 'Flow saved.'));
      navigate('/flows/home');
      return true;
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
      setSaving(null);
      return false;
    }
  };
  return { save, saving };
}

function EditorCanvas() {
  const mode = useTheme((s) => s.mode);
  const { apps, links, onNodesChange, beginDrag, endDrag, dispatch } = useEditorShallow((s) => ({
    apps: s.apps,
    links: s.links,
    onNodesChange: s.onNodesChange,
    beginDrag: s.beginDrag,
    endDrag: s.endDrag,
    dispatch: s.dispatch,
  }));
  const [drawer, setDrawer] = useState<DrawerMode | null>(null);
  const { fitView } = useReactFlow();
  const edges = useMemo<Edge[]>(
    () =>
      links.map((l) => ({
        id: l.id,
        source: l.source,
        target: l.target,
        sourceHandle: l.sourceHandle,
        targetHandle: l.targetHandle,
        type: 'deletable',
      })),
    [links],
  );
  const hasTrigger = apps.some(isTriggerNode);

  const pickAction = (app: App) => {
    dispatch({ type: 'addAction', app });
    setDrawer(null);
    // Bring the new card into view once React Flow has measured it.
    window.setTimeout(() => void fitView({ padding: 0.2, duration: 200, maxZoom: 1 }), 50);
  };

  return (
    <div className="kz-canvas">
      <ReactFlow
        nodes={apps}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onNodeDragStart={beginDrag}
        onNodeDragStop={endDrag}
        onConnect={(c: Connection) => dispatch({ type: 'addLink', source: c.source, target: c.target })}
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
      </ReactFlow>
      {!hasTrigger && <TriggerChooser />}
      <Tools canAdd={hasTrigger} onAddAction={() => setDrawer('actions')} onAddOns={() => setDrawer('addOns')} />
      <ActionDrawer mode={drawer} onClose={() => setDrawer(null)} onPick={pickAction} />
    </div>
  );
}

function EditorTopBar() {
  const navigate = useNavigate();
  const hasNodes = useEditor((s) => s.apps.length > 0);
  const { save, saving } = useSaveFlow();
  const [prompt, setPrompt] = useState(false);

  return (
    <div className="kz-editor-bar">
      <Button icon={<HomeOutlined />} onClick={() => (hasNodes ? setPrompt(true) : navigate('/flows/home'))} data-testid="editor-dashboard">
        Dashboard
      </Button>
      <FlowNameInput />
      <Space className="kz-editor-actions">
        <ThemeSwitch />
        <Button onClick={() => void save(false)} loading={saving === 'save'} disabled={saving !== null} data-testid="save-flow">
          Save
        </Button>
        <Button type="primary" onClick={() => void save(true)} loading={saving === 'publish'} disabled={saving !== null} data-testid="publish-flow">
          Publish
        </Button>
      </Space>
      <Modal
        open={prompt}
        title={SAVE_PROMPT}
        onCancel={() => setPrompt(false)}
        footer={[
          <Button key="no" onClick={() => navigate('/flows/home')} data-testid="leave-no">
            No
          </Button>,
          <Button
            key="yes"
            type="primary"
            loading={saving === 'save'}
            onClick={async () => {
              const ok = await save(false);
              if (!ok) setPrompt(false);
            }}
            data-testid="leave-yes"
          >
            Yes
          </Button>,
        ]}
      >
        Your changes are kept as a draft when you save.
      </Modal>
    </div>
  );
}

function FlowLoader({ id, children }: { id: string | undefined; children: React.ReactNode }) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const [loadedId, setLoadedId] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (!id) return;
    let live = true;
    konnectsApi
      .edit(id)
      .then((res) => {
        if (!live) return;
        const canvas = res.canvas_json;
        if (isLoadableCanvas(canvas)) {
          store.getState().loadSaved(fromCanvasJson(canvas, res.webhook_url), {
            konnectId: res.konnect_id,
            flowName: res.konnect_name ?? canvas.flowName ?? '',
          });
        } else {
          void toast.warning('This flow cannot be opened in the editor.');
        }
        setLoadedId(id);
      })
      .catch((err) => {
        if (!live) return;
        void toast.error(errorMessage(err, 'Something went wrong!'));
        setLoadedId(id);
      });
    return () => {
      live = false;
    };
  }, [id, store, toast]);

  if (id && loadedId !== id) return <Spin className="kz-editor-loading" size="large" />;
  return <>{children}</>;
}

export function CanvasEditor() {
  const { id } = useParams();
  return (
    <EditorProvider key={id ?? 'new'}>
      <ReactFlowProvider>
        <div className="kz-editor">
          <FlowLoader id={id}>
            <EditorTopBar />
            <EditorCanvas />
          </FlowLoader>
        </div>
      </ReactFlowProvider>
    </EditorProvider>
  );
}
