import { ExperimentOutlined, HistoryOutlined, HomeOutlined } from '@ant-design/icons';
import { Button, Modal, Space, Tag, Tooltip } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { ThemeSwitch } from '../shell/ThemeSwitch';
import { deleteDraft } from './api/editorApi';
import { FlowNameInput } from './components/FlowNameInput';
import { RunSettingsButton } from './components/RunSettings';
import { useEditor, useEditorStoreApi } from './EditorContext';
import { EvaluationsPanel } from './evaluations/EvaluationsPanel';
import { loadFlow } from './FlowLoader';
import { RevisionsPanel } from './revisions/RevisionsPanel';
import { hasUnsavedChanges } from './store';
import { useSaveFlow } from './useSaveFlow';

export const SAVE_PROMPT = 'Do You Want to Save the Flow?';
/** The prompt's text for a live flow: what each choice does to the live version. */
export const LIVE_PROMPT =
  'This flow is live. Save keeps the live version running and stores your changes as a pending draft beside it; Publish makes them live; No leaves without saving.';
export const LIVE_SAVE_HINT = 'Saves your changes beside the live version, which keeps running until you publish them.';

/** Dashboard (with the save prompt), the flow name, the theme switch, Run settings, History (the flow's revisions),
 * Evaluations (its example inputs and their score), Save and Publish. */
export function EditorTopBar({ routeId }: { routeId: string | undefined }) {
  const navigate = useNavigate();
  const store = useEditorStoreApi();
  const hasNodes = useEditor((s) => s.apps.length > 0);
  const live = useEditor((s) => s.loadedStatus === 'Published');
  const pending = useEditor((s) => s.draftPending);
  const { save, saving } = useSaveFlow();
  const [prompt, setPrompt] = useState(false);
  const konnectId = useEditor((s) => s.konnectId);
  const [history, setHistory] = useState(false);
  const [evaluations, setEvaluations] = useState(false);

  /** No: a draft created by testing in this session (the route has no numeric id) is deleted. */
  const discard = () => {
    const konnectId = store.getState().konnectId;
    if (konnectId && !(routeId && /^\d+$/.test(routeId))) void deleteDraft(konnectId).catch(() => undefined);
    navigate('/flows/home');
  };

  return (
    <div className="kz-editor-bar">
      <Button
        icon={<HomeOutlined />}
        onClick={() => (hasNodes && hasUnsavedChanges(store.getState()) ? setPrompt(true) : navigate('/flows/home'))}
        data-testid="editor-dashboard"
      >
        Dashboard
      </Button>
      <FlowNameInput />
      {live ? (
        <Tooltip title={pending ? 'Saved changes wait beside the live version until you publish them.' : 'This flow is published and runs.'}>
          <Tag color={pending ? 'blue' : 'green'} data-testid="editor-live">
            {pending ? 'Live · unpublished changes' : 'Live'}
          </Tag>
        </Tooltip>
      ) : null}
      <Space className="kz-editor-actions">
        <ThemeSwitch />
        <RunSettingsButton />
        {konnectId ? (
          <Button icon={<HistoryOutlined />} onClick={() => setHistory(true)} data-testid="editor-history">
            History
          </Button>
        ) : null}
        {konnectId ? (
          <Button icon={<ExperimentOutlined />} onClick={() => setEvaluations(true)} data-testid="editor-evaluations">
            Evaluations
          </Button>
        ) : null}
        <Tooltip title={live ? LIVE_SAVE_HINT : undefined}>
          <Button onClick={() => void save(false)} loading={saving === 'save'} disabled={saving !== null} data-testid="save-flow">
            {live ? 'Save as draft' : 'Save'}
          </Button>
        </Tooltip>
        <Button type="primary" onClick={() => void save(true)} loading={saving === 'publish'} disabled={saving !== null} data-testid="publish-flow">
          Publish
        </Button>
      </Space>
      {konnectId ? <EvaluationsPanel konnectId={konnectId} open={evaluations} onClose={() => setEvaluations(false)} /> : null}
      {konnectId ? (
        <RevisionsPanel
          konnectId={konnectId}
          open={history}
          onClose={() => setHistory(false)}
          onRestored={async () => {
            await loadFlow(store, konnectId);
            setHistory(false);
          }}
        />
      ) : null}
      <Modal
        open={prompt}
        title={SAVE_PROMPT}
        onCancel={() => setPrompt(false)}
        footer={[
          <Button key="no" onClick={discard} data-testid="leave-no">
            No
          </Button>,
          <Button
            key="yes"
            type={live ? 'default' : 'primary'}
            loading={saving === 'save'}
            onClick={async () => {
              const ok = await save(false);
              if (!ok) setPrompt(false);
            }}
            data-testid="leave-yes"
          >
            {live ? 'Save as pending draft' : 'Yes'}
          </Button>,
          ...(live
            ? [
                <Button
                  key="publish"
                  type="primary"
                  loading={saving === 'publish'}
                  onClick={async () => {
                    const ok = await save(true);
                    if (!ok) setPrompt(false);
                  }}
                  data-testid="leave-publish"
                >
                  Publish
                </Button>,
              ]
            : []),
        ]}
      >
        {live ? LIVE_PROMPT : 'Your changes are kept as a draft when you save.'}
      </Modal>
    </div>
  );
}
