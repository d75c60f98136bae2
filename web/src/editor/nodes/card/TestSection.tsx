import { Button, Checkbox, Radio, Space, Typography } from 'antd';
import { Drawer } from '../../../lib/Drawer';
import { useState } from 'react';
import { useEditorStoreApi } from '../../EditorContext';
import type { FlowNodeData } from '../../model/types';
import { kindOf } from '../registry';
import { useNodeTest } from './useNodeTest';

export const TEST_LABEL = 'Test & Review';
export const TESTING_LABEL = 'Please Wait...';
/** Shown on a custom-script trigger while its script-triggers popup is open. */
export const SCRIPT_OPEN_TEXT = 'Install the script shown in the popup, send a response, then close the popup.';

/**
 * The labels of the trigger test drawer: the keys of the trigger's data from its last test (what
 * later nodes map), plus labels chosen before that the latest test no longer lists.
 */
export function triggerTestLabels(data: FlowNodeData): string[] {
  const outputs = (data.configResponses ?? []).filter((f) => f.additional && f.config_key).map((f) => f.config_key);
  return [...new Set([...outputs, ...(data.testFilter?.labels ?? [])])];
}

/**
 * The trigger test drawer: AND/OR (default AND) and label checkboxes, then Proceed. The api answers
 * a sample that has a value for every checked label (AND) or for at least one (OR), or refuses.
 */
function TriggerTestDrawer({ id, data, open, onClose, onProceed }: { id: string; data: FlowNodeData; open: boolean; onClose: () => void; onProceed: () => void }) {
  const store = useEditorStoreApi();
  const saved = data.testFilter;
  const [join, setJoin] = useState<'AND' | 'OR'>(saved?.join ?? 'AND');
  const [labels, setLabels] = useState<string[]>(saved?.labels ?? []);
  const choices = triggerTestLabels(data);
  return (
    <Drawer open={open} onClose={onClose} title="Test Trigger" size={380} destroyOnHidden>
      <Space orientation="vertical" size="large">
        <Radio.Group value={join} onChange={(e) => setJoin(e.target.value as 'AND' | 'OR')} data-testid={`trigger-test-join-${id}`}>
          <Radio.Button value="AND">AND</Radio.Button>
          <Radio.Button value="OR">OR</Radio.Button>
        </Radio.Group>
        <Typography.Text type="secondary">
          {join === 'AND' ? 'The sample must have a value for every checked label.' : 'The sample must have a value for at least one checked label.'}
        </Typography.Text>
        {choices.length > 0 ? (
          <Checkbox.Group
            className="kz-test-labels"
            options={choices}
            value={labels}
            onChange={(v) => setLabels(v)}
            data-testid={`trigger-test-labels-${id}`}
          />
        ) : (
          <Typography.Text type="secondary" data-testid={`trigger-test-no-labels-${id}`}>
            Test the trigger once: the keys of its data become labels to choose.
          </Typography.Text>
        )}
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

/**
 * 'Test & Review' ('Please Wait...' and disabled while testing). A trigger goes through its AND/OR
 * drawer, except a Scheduler: its test starts nothing and shows the next run times on the card.
 */
export function TestSection({ id, data }: { id: string; data: FlowNodeData }) {
  const { run } = useNodeTest(id);
  const [busy, setBusy] = useState(false);
  const [drawer, setDrawer] = useState(false);
  // Kinds whose test has no sample to filter (a schedule's test lists its next runs) have no drawer.
  const trigger = data.app_detail.app_index === 1 && kindOf(data)?.testDrawer !== false;
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
      {data.customScriptOpen && (
        <Typography.Text type="secondary" className="kz-script-open" data-testid={`script-open-${id}`}>
          {SCRIPT_OPEN_TEXT}
        </Typography.Text>
      )}
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
