import { HomeOutlined } from '@ant-design/icons';
import { Button, Modal, Space } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { ThemeSwitch } from '../shell/ThemeSwitch';
import { deleteDraft } from './api/editorApi';
import { FlowNameInput } from './components/FlowNameInput';
import { useEditor, useEditorStoreApi } from './EditorContext';
import { useSaveFlow } from './useSaveFlow';

export const SAVE_PROMPT = 'Do You Want to Save the Flow?';

/** Dashboard (with the save prompt), the flow name, the theme switch, Save and Publish. */
export function EditorTopBar({ routeId }: { routeId: string | undefined }) {
  const navigate = useNavigate();
  const store = useEditorStoreApi();
  const hasNodes = useEditor((s) => s.apps.length > 0);
  const { save, saving } = useSaveFlow();
  const [prompt, setPrompt] = useState(false);

  /** No: a draft created by testing in this session (the route has no numeric id) is deleted. */
  const discard = () => {
    const konnectId = store.getState().konnectId;
    if (konnectId && !(routeId && /^\d+$/.test(routeId))) void deleteDraft(konnectId).catch(() => undefined);
    navigate('/flows/home');
  };

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
          <Button key="no" onClick={discard} data-testid="leave-no">
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
