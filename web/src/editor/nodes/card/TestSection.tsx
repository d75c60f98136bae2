import { Button, Checkbox, Drawer, Radio, Space } from 'antd';
import { useState } from 'react';
import { useEditorStoreApi } from '../../EditorContext';
import type { FlowNodeData } from '../../model/types';
import { useNodeTest } from './useNodeTest';

export const TEST_LABEL = 'Test & Review';
export const TESTING_LABEL = 'Please Wait...';

/** The trigger test drawer: AND/OR (default AND) and label checkboxes, then Proceed. */
function TriggerTestDrawer({ id, data, open, onClose, onProceed }: { id: string; data: FlowNodeData; open: boolean; onClose: () => void; onProceed: () => void }) {
  const store = useEditorStoreApi();
  const saved = data.testFilter;
  const [join, setJoin] = useState<'AND' | 'OR'>(saved?.join ?? 'AND');
  const [labels, setLabels] = useState<string[]>(saved?.labels ?? []);
  const choices = (data.configResponses ?? []).filter((f) => !f.additional).map((f) => f.label || f.config_key);
  return (
    <Drawer open={open} onClose={onClose} title="Test Trigger" size={380} destroyOnHidden>
      <Space orientation="vertical" size="large">
        <Radio.Group value={join} onChange={(e) => setJoin(e.target.value as 'AND' | 'OR')} data-testid={`trigger-test-join-${id}`}>
          <Radio.Button value="AND">AND</Radio.Button>
          <Radio.Button value="OR">OR</Radio.Button>
        </Radio.Group>
        {choices.length > 0 && <Checkbox.Group options={choices} value={labels} onChange={(v) => setLabels(v)} />}
        <Button
          type="primary"
          onClick={() => {
            store.getState().patchNode(id, { testFilter: { join, labels } });
            onProceed();
          }}
          data-testid={`trigger-test-proceed-${id}`}
        >
          Proceed
        </Button>
      </Space>
    </Drawer>
  );
}

/** 'Test & Review' ('Please Wait...' and disabled while testing); the trigger goes through its drawer. */
export function TestSection({ id, data }: { id: string; data: FlowNodeData }) {
  const { run } = useNodeTest(id);
  const [busy, setBusy] = useState(false);
  const [drawer, setDrawer] = useState(false);
  const trigger = data.app_detail.app_index === 1;
  const test = async () => {
    setBusy(true);
    try {
      await run();
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="kz-test">
      <Button
        type="primary"
        block
        disabled={busy}
        onClick={() => (trigger ? setDrawer(true) : void test())}
        data-testid={`node-test-${id}`}
      >
        {busy ? TESTING_LABEL : TEST_LABEL}
      </Button>
      {trigger && (
        <TriggerTestDrawer
          id={id}
          data={data}
          open={drawer}
          onClose={() => setDrawer(false)}
          onProceed={() => {
            setDrawer(false);
            void test();
          }}
        />
      )}
    </div>
  );
}
