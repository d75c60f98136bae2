/**
 * The editor's Evaluations panel: the flow's evaluation set (example inputs with checks on the steps'
 * outputs), edited as JSON and saved with PUT; Run scores the live revision or the saved draft and lists
 * each case, pass or fail, with the checks that failed, the value found and why. docs/ai.md, "Evaluations".
 */
import { ExperimentOutlined } from '@ant-design/icons';
import { Alert, Button, Checkbox, Input, InputNumber, List, Radio, Space, Spin, Tag, Typography } from 'antd';
import { useState } from 'react';
import type { EvaluationRun, EvaluationSet, EvaluationSetIn } from '../../api/models';
import { $api, errorMessage, queryClient } from '../../api/typed';
import { Drawer } from '../../lib/Drawer';
import { useToast } from '../../lib/useToast';

const SET_PATH = '/api/v1/konnects/{konnect_id}/evaluations';

/** An example of a set with one case, shown when the flow has none yet. */
export const EXAMPLE_CASES: EvaluationSetIn['cases'] = [
  {
    name: 'praise',
    input: { review: 'great kettle' },
    checks: [{ op: 'equals', step: 'node-2', path: 'data.sentiment', value: 'positive' }],
  },
];

/** The cases as the editor's text shows them (the set's own fields are separate controls). */
export function casesText(set: EvaluationSet | undefined): string {
  const cases = set && set.cases.length > 0 ? set.cases : EXAMPLE_CASES;
  return JSON.stringify(cases, null, 2);
}

/** The cases parsed from the text, or why they cannot be (the api checks the rest and names its limits). */
export function parseCases(text: string): { cases: EvaluationSetIn['cases'] } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `The cases are not valid JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(value)) return { error: 'The cases must be a JSON list: [{"name", "input", "checks"}, ...]' };
  return { cases: value as EvaluationSetIn['cases'] };
}

const percent = (score: number) => `${Math.round(score * 1000) / 10}%`;

function RunResult({ run }: { run: EvaluationRun }) {
  return (
    <div data-testid="evaluation-result">
      <Space wrap>
        <Tag color={run.passed_threshold ? 'green' : 'red'} data-testid="evaluation-score">
          {`${percent(run.score)} (${run.passed}/${run.total})`}
        </Tag>
        <Typography.Text>
          {run.passed_threshold ? 'Passed' : 'Below'} the threshold {run.threshold} on {run.revision == null ? 'the draft' : `revision ${run.revision}`}
        </Typography.Text>
        <Typography.Text type="secondary">{run.seconds.toFixed(1)} s</Typography.Text>
      </Space>
      <List
        size="small"
        dataSource={run.cases}
        renderItem={(c) => (
          <List.Item data-testid={`evaluation-case-${c.name}`}>
            <Space orientation="vertical" size={0} style={{ width: '100%' }}>
              <Space size={6} wrap>
                <Tag color={c.passed ? 'green' : 'red'}>{c.passed ? 'Pass' : 'Fail'}</Tag>
                <Typography.Text strong>{c.name}</Typography.Text>
                <Typography.Text type="secondary">{c.status}</Typography.Text>
              </Space>
              {c.error ? <Typography.Text type="danger">{c.error}</Typography.Text> : null}
              {c.checks
                .filter((check) => !check.passed)
                .map((check, i) => (
                  <Typography.Text key={i} data-testid="evaluation-failed-check">
                    <Typography.Text code>{`${check.step ?? '?'}.${check.path || '*'}`}</Typography.Text> {check.op}: {check.reason}
                    {check.actual !== undefined && check.actual !== null ? ` (found ${JSON.stringify(check.actual)})` : ''}
                  </Typography.Text>
                ))}
            </Space>
          </List.Item>
        )}
      />
    </div>
  );
}

/** The set's editor, its state started from the set as first loaded (saving refetches the set, not the text). */
function SetEditor({ konnectId, initial, onResult }: { konnectId: number; initial: EvaluationSet; onResult: (run: EvaluationRun) => void }) {
  const toast = useToast();
  const save = $api.useMutation('put', SET_PATH);
  const run = $api.useMutation('post', '/api/v1/konnects/{konnect_id}/evaluations/run');
  const [text, setText] = useState(() => casesText(initial));
  const [threshold, setThreshold] = useState<number>(initial.threshold ?? 1);
  const [stopBeforeEffects, setStopBeforeEffects] = useState(initial.stop_before_effects ?? false);
  const [target, setTarget] = useState<'live' | 'draft'>('live');
  const [problem, setProblem] = useState<string | null>(null);

  const onSave = async (): Promise<boolean> => {
    const parsed = parseCases(text);
    if ('error' in parsed) {
      setProblem(parsed.error);
      return false;
    }
    try {
      await save.mutateAsync({
        params: { path: { konnect_id: konnectId } },
        body: { cases: parsed.cases, threshold, stop_before_effects: stopBeforeEffects },
      });
      setProblem(null);
      await queryClient.invalidateQueries({ queryKey: ['get', SET_PATH] });
      return true;
    } catch (err) {
      setProblem(errorMessage(err, 'The evaluations could not be saved'));
      return false;
    }
  };

  const onRun = async () => {
    if (!(await onSave())) return;
    try {
      const reply = await run.mutateAsync({
        params: { path: { konnect_id: konnectId } },
        body: target === 'draft' ? { revision: 'draft' } : {},
      });
      onResult(reply);
      await queryClient.invalidateQueries({ queryKey: ['get', SET_PATH] });
    } catch (err) {
      void toast.error(errorMessage(err, 'The evaluations could not run'));
    }
  };

  return (
    <>
      <Input.TextArea
        value={text}
        onChange={(e) => setText(e.target.value)}
        autoSize={{ minRows: 8, maxRows: 24 }}
        spellCheck={false}
        style={{ fontFamily: 'monospace' }}
        data-testid="evaluation-cases"
      />
      <Space wrap style={{ marginTop: 8 }}>
        <span>
          Threshold{' '}
          <InputNumber
            min={0}
            max={1}
            step={0.05}
            value={threshold}
            onChange={(v) => setThreshold(typeof v === 'number' ? v : 1)}
            data-testid="evaluation-threshold"
          />
        </span>
        <Checkbox checked={stopBeforeEffects} onChange={(e) => setStopBeforeEffects(e.target.checked)} data-testid="evaluation-stop">
          Stop before steps with effects
        </Checkbox>
        <Radio.Group value={target} onChange={(e) => setTarget(e.target.value as 'live' | 'draft')} optionType="button" size="small">
          <Radio.Button value="live">Live revision</Radio.Button>
          <Radio.Button value="draft">Saved draft</Radio.Button>
        </Radio.Group>
        <Button onClick={() => void onSave()} loading={save.isPending} data-testid="evaluation-save">
          Save
        </Button>
        <Button type="primary" onClick={() => void onRun()} loading={run.isPending} data-testid="evaluation-run">
          Run
        </Button>
      </Space>
      {problem ? <Alert type="error" title={problem} style={{ marginTop: 8 }} data-testid="evaluation-problem" /> : null}
    </>
  );
}

export function EvaluationsPanel({ konnectId, open, onClose }: { konnectId: number; open: boolean; onClose: () => void }) {
  const set = $api.useQuery('get', SET_PATH, { params: { path: { konnect_id: konnectId } } }, { enabled: open });
  const [result, setResult] = useState<EvaluationRun | null>(null);
  const last = set.data?.last_run;
  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={
        <Space>
          <ExperimentOutlined />
          Evaluations
        </Space>
      }
      size="large"
      destroyOnHidden
    >
      <div data-testid="evaluations-panel">
        {set.isPending ? <Spin /> : null}
        {set.isError ? <Alert type="error" title={errorMessage(set.error, 'The evaluations could not be loaded')} /> : null}
        <Typography.Paragraph type="secondary">
          Example inputs (the trigger's output) with checks on a step's output: equals, contains, matches, exists, between,
          schema. Each run executes the whole flow per case; steps with effects run for real unless you stop before them. No
          task is counted.
        </Typography.Paragraph>
        {last ? (
          <Typography.Paragraph data-testid="evaluation-last-run">
            Last run: {percent(last.score)} ({last.passed}/{last.total}) on {last.revision == null ? 'the draft' : `revision ${last.revision}`},{' '}
            {last.passed_threshold ? 'passed' : 'below the threshold'}
          </Typography.Paragraph>
        ) : null}
        {set.data ? <SetEditor key={konnectId} konnectId={konnectId} initial={set.data} onResult={setResult} /> : null}
        {result ? <RunResult run={result} /> : null}
      </div>
    </Drawer>
  );
}
