/**
 * The steps of one run as the flow reads: each step's app (name and icon), its status in words and
 * colour, how long it took, and its input and output as key-value rows; the JSON on demand.
 * Used by the task-log modal of a flow and by the history drawer.
 */
import { useQuery } from '@tanstack/react-query';
import { ForkOutlined } from '@ant-design/icons';
import { Alert, Button, Descriptions, Empty, List, Space, Spin, Tag, Tooltip, Typography } from 'antd';
import dayjs from 'dayjs';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { call, fetchClient } from '../../api/typed';
import type { Task, TaskLog, TasksResponse } from '../../api/models';
import { AppIcon } from '../../editor/components/AppIcon';
import { TaskStatusTag } from '../../lib/taskStatus';

/** How many rows a key-value view shows before '+N more'. */
export const KV_ROWS = 30;

export const formatDate = (value: string) => (dayjs(value).isValid() ? dayjs(value).format('DD MMM YYYY, HH:mm:ss') : value);

/** A duration in words: "850 ms", "1.5 s", "2 min 5 s"; unknown (old runs): null. */
export function formatDuration(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return null;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One value in a cell: text as it is; a list or an object summarised ("3 items", "4 fields"). */
export function summarise(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '(empty)' : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '(no items)';
    const simple = value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
    if (simple && value.length <= 5) return value.map((v) => String(v)).join(', ');
    return `${value.length} items`;
  }
  if (isPlainObject(value)) {
    const n = Object.keys(value).length;
    return n === 0 ? '(empty)' : `${n} field${n === 1 ? '' : 's'}`;
  }
  return String(value);
}

/**
 * The rows of a key-value view: the top-level keys, an object's keys one level down joined by
 * '.' ("customer.name"); anything deeper is summarised.
 */
export function kvRows(data: unknown): { key: string; value: string }[] {
  if (!isPlainObject(data)) return data === null || data === undefined ? [] : [{ key: 'value', value: summarise(data) }];
  const rows: { key: string; value: string }[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [sub, inner] of Object.entries(value)) rows.push({ key: `${key}.${sub}`, value: summarise(inner) });
    } else rows.push({ key, value: summarise(value) });
  }
  return rows;
}

/** Key-value rows of `data`, '+N more' past {@link KV_ROWS}. */
export function KeyValues({ title, data, testId }: { title?: ReactNode; data: unknown; testId?: string }) {
  const [all, setAll] = useState(false);
  const rows = kvRows(data);
  const shown = all ? rows : rows.slice(0, KV_ROWS);
  if (rows.length === 0)
    return (
      <Descriptions title={title} size="small" column={1} data-testid={testId}>
        <Descriptions.Item label="">
          <Typography.Text type="secondary">Nothing</Typography.Text>
        </Descriptions.Item>
      </Descriptions>
    );
  return (
    <div data-testid={testId}>
      <Descriptions title={title} size="small" column={1} bordered>
        {shown.map((r) => (
          <Descriptions.Item key={r.key} label={r.key}>
            <span className="kz-kv-value">{r.value}</span>
          </Descriptions.Item>
        ))}
      </Descriptions>
      {rows.length > shown.length && (
        <Button type="link" size="small" onClick={() => setAll(true)}>
          +{rows.length - shown.length} more
        </Button>
      )}
    </div>
  );
}

/** A "JSON" toggle that shows `data` as JSON below it. */
export function JsonToggle({ data, testId }: { data: unknown; testId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div>
      <Button size="small" type={open ? 'default' : 'link'} onClick={() => setOpen(!open)} aria-expanded={open} data-testid={`${testId}-toggle`}>
        {open ? 'Hide JSON' : 'JSON'}
      </Button>
      {open && (
        <pre className="kz-json" data-testid={testId}>
          {JSON.stringify(data, null, 2)}
        </pre>
      )}
    </div>
  );
}

/** The icon the editor shows for the app or add-on: the api's image of a catalogue app, else its antd icon. */
export function StepIcon({ name, appId, provider }: { name: string; appId?: number | null; provider?: string }) {
  return <AppIcon name={name} provider={provider ?? ''} imageUrl={appId ? `/api/v1/apps/${appId}/icon` : null} size={24} />;
}

/** A step's status: Success / Error, Skipped (a path not chosen), or Stopped by filter for a filter that stopped the run. */
export function stepStatus(task: Task): string {
  if (task.status.toUpperCase() === 'SKIPPED') return 'SKIPPED';
  if (task.data && typeof task.data.stop === 'string' && task.data.stop) return 'FILTERED';
  return task.status.toUpperCase();
}

/**
 * The router path a step ran on (StepResult.path, "<router id>/<path name>"), as its router id and
 * path name; null for a step not on a path.
 */
export function stepPath(task: Task): { router: string; name: string } | null {
  const raw = (task as { path?: unknown }).path ?? task.data?.path;
  if (typeof raw !== 'string' || !raw) return null;
  const cut = raw.indexOf('/');
  return cut < 0 ? { router: '', name: raw } : { router: raw.slice(0, cut), name: raw.slice(cut + 1) };
}

interface FailedTry {
  number: number;
  error: string;
  waited_seconds: number;
}

/** A step's failed tries (its task data's ``retries``), as far as they have the expected shape. */
export function retriesOf(raw: unknown): FailedTry[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (r): r is FailedTry => typeof r === 'object' && r !== null && typeof (r as FailedTry).number === 'number' && typeof (r as FailedTry).error === 'string',
  );
}

/** What a Wait for a Call or an Approval waited for and what ended the wait (its task data's ``wait``). */
export interface StepWaitRecord {
  waiting_for: string;
  since: string;
  until: string;
  resumed_by: 'call' | 'timeout' | 'cancel';
  resumed_at: string;
  decided_by?: string | null;
}

/** A step's wait record, as far as it has the expected shape; null for other steps and older runs. */
export function waitOf(raw: unknown): StepWaitRecord | null {
  if (!isPlainObject(raw)) return null;
  const r = raw as Partial<StepWaitRecord>;
  const texts = [r.waiting_for, r.since, r.until, r.resumed_at];
  if (!texts.every((t) => typeof t === 'string' && t) || !['call', 'timeout', 'cancel'].includes(String(r.resumed_by))) return null;
  return { ...(r as StepWaitRecord), decided_by: typeof r.decided_by === 'string' && r.decided_by ? r.decided_by : null };
}

/** What ended a wait, in words: "a call to its resume URL", "the decision of a@x.io", "its timeout". */
export function resumedBy(wait: StepWaitRecord): string {
  if (wait.resumed_by === 'timeout') return 'its timeout';
  if (wait.resumed_by === 'cancel') return 'a cancel';
  if (wait.decided_by) return `the decision of ${wait.decided_by}`;
  return wait.waiting_for.startsWith('approval') ? 'an approver' : 'a call to its resume URL';
}

/** How long a wait lasted: "850 ms", "1.5 s", "2 min 5 s", "3 h 20 min", "2 d 4 h". */
export function waitedWords(ms: number): string | null {
  if (!Number.isFinite(ms) || ms < 0) return null;
  if (ms < 3_600_000) return formatDuration(ms);
  const hours = Math.floor(ms / 3_600_000);
  if (hours < 24) {
    const minutes = Math.round((ms % 3_600_000) / 60_000);
    return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
  }
  const rest = hours % 24;
  return rest ? `${Math.floor(hours / 24)} d ${rest} h` : `${Math.floor(hours / 24)} d`;
}

/** The wait of a step: whom it waited for, since and until when, what resumed it and when, how long. */
function WaitRecord({ wait, id, output }: { wait: StepWaitRecord; id: number; output: unknown }) {
  const waited = waitedWords(dayjs(wait.resumed_at).diff(dayjs(wait.since)));
  const approval = wait.waiting_for.startsWith('approval');
  const decision = approval && isPlainObject(output) && typeof output.decision === 'string' ? output.decision : null;
  return (
    <Alert
      type={wait.resumed_by === 'timeout' ? 'warning' : 'info'}
      showIcon
      title={`Waited for ${wait.waiting_for}${waited ? ` (${waited})` : ''}`}
      description={
        <Descriptions size="small" column={1} data-testid={`task-wait-record-${id}`}>
          <Descriptions.Item label="Since">{formatDate(wait.since)}</Descriptions.Item>
          <Descriptions.Item label="Until (timeout)">{formatDate(wait.until)}</Descriptions.Item>
          <Descriptions.Item label="Resumed">
            <span data-testid={`task-wait-resumed-${id}`}>
              {`by ${resumedBy(wait)} at ${formatDate(wait.resumed_at)}`}
              {decision ? `: ${decision}` : ''}
            </span>
          </Descriptions.Item>
          {approval && (
            <Descriptions.Item label="Links">
              <Link to="/approvals" data-testid={`task-wait-approvals-${id}`}>
                Pending approvals
              </Link>
            </Descriptions.Item>
          )}
        </Descriptions>
      }
      data-testid={`task-wait-${id}`}
    />
  );
}

interface WebhookAnswer {
  sent: boolean;
  status: number;
  body: string;
  not_sent?: string;
}

/** A Respond step's answer to its webhook (its output: docs/webhook-response.md), null for other steps. */
export function answerOf(provider: string | null | undefined, output: unknown): WebhookAnswer | null {
  if (provider !== 'respond' || typeof output !== 'object' || output === null) return null;
  const o = output as Partial<WebhookAnswer>;
  if (typeof o.sent !== 'boolean' || typeof o.status !== 'number') return null;
  return { sent: o.sent, status: o.status, body: typeof o.body === 'string' ? o.body : '', not_sent: o.not_sent };
}

export interface ToolCall {
  id: string;
  tool: string;
  kind: string | null;
  iteration: number;
  input: unknown;
  output: unknown;
  error: string | null;
  duration_ms: number;
  recalled?: boolean;
  /** What the tool adds: a sub-flow's called run (`run_id`, `flow_id`, `flow_name`, `status`), an MCP tool's server. */
  detail?: { run_id?: string; flow_id?: number; flow_name?: string; status?: string; server?: string } | null;
}

const TOOL_KIND_LABELS: Record<string, string> = { app_action: 'app action', addon: 'add-on', flow: 'sub-flow', mcp: 'MCP tool' };

/** An AI Agent step's tool calls (its output's ``tool_calls``: docs/ai.md), [] for other steps. */
export function toolCallsOf(provider: string | null | undefined, output: unknown): ToolCall[] {
  if (provider !== 'agent' || typeof output !== 'object' || output === null) return [];
  const raw = (output as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (c): c is ToolCall => typeof c === 'object' && c !== null && typeof (c as ToolCall).tool === 'string' && typeof (c as ToolCall).iteration === 'number',
  );
}

/** The tool calls of an agent step, in order: each with its tool, input, output or error, and duration. */
export function ToolCalls({ calls, taskId }: { calls: ToolCall[]; taskId: number }) {
  return (
    <div className="kz-task-tools" data-testid={`task-tools-${taskId}`}>
      <Typography.Text strong>
        Tool calls ({calls.length})
      </Typography.Text>
      <ol>
        {calls.map((c, i) => (
          <li key={`${c.id}-${i}`} data-testid={`task-tool-${taskId}-${i}`}>
            <Space wrap size={6}>
              <Typography.Text code>{c.tool}</Typography.Text>
              {c.kind && <Tag>{TOOL_KIND_LABELS[c.kind] ?? c.kind}</Tag>}
              {c.kind === 'flow' && c.detail?.run_id && (
                <Tag color="cyan" title={`Called run ${c.detail.run_id}`} data-testid={`task-tool-run-${taskId}-${i}`}>
                  {c.detail.flow_id != null ? <Link to={`/create/${c.detail.flow_id}`}>{c.detail.flow_name || `flow ${c.detail.flow_id}`}</Link> : c.detail.flow_name}
                  {` · run ${c.detail.run_id.slice(0, 8)}`}
                </Tag>
              )}
              <Tag>iteration {c.iteration}</Tag>
              <Tag data-testid={`task-tool-duration-${taskId}-${i}`}>{formatDuration(c.duration_ms) ?? '—'}</Tag>
              {c.recalled && (
                <Tooltip title="Finished before the runner restarted: its result was read from the journal, the tool was not called again">
                  <Tag color="blue">from the journal</Tag>
                </Tooltip>
              )}
              {c.error ? <Tag color="red">error</Tag> : <Tag color="green">done</Tag>}
            </Space>
            {c.error && <Alert type="error" showIcon title={c.error} data-testid={`task-tool-error-${taskId}-${i}`} />}
            <div className="kz-task-io">
              <KeyValues title="Input" data={c.input ?? {}} testId={`task-tool-input-${taskId}-${i}`} />
              {!c.error && <KeyValues title="Output" data={c.output} testId={`task-tool-output-${taskId}-${i}`} />}
            </div>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** At most this much of an answer's body in its one line (the output rows show it whole). */
const ANSWER_EXCERPT = 200;

function StepItem({ task, index }: { task: Task; index: number }) {
  const duration = formatDuration(task.duration_ms);
  const data = task.data ?? {};
  const error = typeof data.error === 'string' && data.error ? data.error : null;
  const stop = typeof data.stop === 'string' && data.stop ? data.stop : null;
  const skipped = stepStatus(task) === 'SKIPPED';
  const path = stepPath(task);
  // waits: a Wait for a Call or an Approval (docs/waits.md): whom it waited for, since, until, what resumed it
  const wait = waitOf(data.wait);
  // rate budgets: the step waited for its app account's budget (docs/rate-budgets.md); a wait's words otherwise
  const waited = !wait && typeof data.wait_reason === 'string' && data.wait_reason ? data.wait_reason : null;
  // on_error: the tries that failed before the last one, and whether the run went on after a failure
  const retries = retriesOf(data.retries);
  const continued = data.continued === true;
  // respond: what the step answered the webhook's caller
  const answer = answerOf(task.provider, data.output);
  // agent: each tool call with its input, output and duration (docs/ai.md)
  const toolCalls = toolCallsOf(task.provider, data.output);
  return (
    <List.Item data-testid={`task-${task.id}`} data-path={path?.name}>
      <div className={`kz-task${path ? ' kz-task-on-path' : ''}${skipped ? ' kz-task-skipped' : ''}`}>
        <Space wrap size={8} className="kz-task-head">
          <Typography.Text type="secondary">{index + 1}.</Typography.Text>
          {path && (
            <Tooltip title={`On the path ${path.name} of the router ${path.router}`}>
              <Tag icon={<ForkOutlined />} color="geekblue" data-testid={`task-path-${task.id}`}>
                {path.name}
              </Tag>
            </Tooltip>
          )}
          <StepIcon name={task.app_name} appId={task.app_id} provider={task.provider} />
          <Tooltip title={`Step ${task.step_id}`}>
            <Typography.Text strong data-testid={`task-app-${task.id}`}>
              {task.app_name}
            </Typography.Text>
          </Tooltip>
          <TaskStatusTag status={stepStatus(task)} testId={`task-status-${task.id}`} />
          {duration && (
            <Tooltip title={task.started_at ? `Started ${formatDate(task.started_at)}` : undefined}>
              <Tag data-testid={`task-duration-${task.id}`}>{duration}</Tag>
            </Tooltip>
          )}
          <Typography.Text type="secondary">{formatDate(task.task_date)}</Typography.Text>
        </Space>
        {error && <Alert type="error" showIcon title={error} data-testid={`task-error-${task.id}`} />}
        {stop && <Alert type={skipped ? 'info' : 'warning'} showIcon title={stop} data-testid={`task-stop-${task.id}`} />}
        {wait && <WaitRecord wait={wait} id={task.id} output={data.output} />}
        {waited && <Alert type="info" showIcon title={waited} data-testid={`task-wait-${task.id}`} />}
        {retries.length > 0 && (
          <Alert
            type="warning"
            showIcon
            title={`Tried ${retries.length + 1} times: ${retries.length} ${retries.length === 1 ? 'try' : 'tries'} failed before the last`}
            description={
              <ol className="kz-task-retries">
                {retries.map((r) => (
                  <li key={r.number}>
                    {r.error} — waited {r.waited_seconds} s
                  </li>
                ))}
              </ol>
            }
            data-testid={`task-retries-${task.id}`}
          />
        )}
        {continued && (
          <Alert type="info" showIcon title="The step failed and the run went on (Continue on error)" data-testid={`task-continued-${task.id}`} />
        )}
        {answer && (
          <Alert
            type={answer.sent ? 'success' : 'info'}
            showIcon
            title={answer.sent ? `Answered the webhook: ${answer.status}` : `Not sent (${answer.status}): ${answer.not_sent ?? ''}`}
            description={answer.body ? answer.body.slice(0, ANSWER_EXCERPT) + (answer.body.length > ANSWER_EXCERPT ? '…' : '') : undefined}
            data-testid={`task-answer-${task.id}`}
          />
        )}
        {toolCalls.length > 0 && <ToolCalls calls={toolCalls} taskId={task.id} />}
        {!skipped && <div className="kz-task-io">
          <KeyValues title="Input" data={data.input ?? {}} testId={`task-input-${task.id}`} />
          {data.output !== undefined && data.output !== null && <KeyValues title="Output" data={data.output} testId={`task-output-${task.id}`} />}
        </div>}
        <JsonToggle data={data} testId={`task-json-${task.id}`} />
      </div>
    </List.Item>
  );
}

/** The steps of a run, fetched once per run (cached: the modal and the drawer share it). */
export function useRunSteps(logId: number) {
  return useQuery<TasksResponse>({ queryKey: ['task-log-steps', logId], queryFn: () => call(fetchClient.GET('/api/v1/task_logs/{task_log_id}/tasks', { params: { path: { task_log_id: logId } } })), staleTime: 30_000 });
}

export function StepList({ logId }: { logId: number }) {
  const steps = useRunSteps(logId);
  if (steps.isPending) return <Spin />;
  if (steps.isError) return <Alert type="error" title="The steps of this run could not be loaded." />;
  const tasks = steps.data.tasks ?? [];
  if (tasks.length === 0) return <Empty description="No Task Found" />;
  return <List size="small" dataSource={tasks} data-testid={`steps-${logId}`} renderItem={(task, i) => <StepItem task={task} index={i} />} />;
}

/**
 * What the run received: the trigger's data under its app's name and icon. Entries of the run's
 * data that are neither the trigger nor a step (older runs) follow under their own keys.
 */
export function RunData({ log }: { log: TaskLog }) {
  const steps = useRunSteps(log.id);
  const data = log.data ?? {};
  // Which entry is the trigger and which are steps comes with the steps (else every entry shows by its key).
  if (steps.isPending) return <Spin />;
  const stepIds = new Set((steps.data?.tasks ?? []).map((t) => t.step_id));
  const trigger = steps.data?.trigger ?? null;
  const entries = Object.entries(data).filter(([k]) => !stepIds.has(k));
  if (entries.length === 0) return <Empty description="No Label Found" />;
  return (
    <div className="kz-run-data">
      {entries.map(([key, value]) => {
        const isTrigger = trigger?.step_id === key;
        return (
          <div key={key} className="kz-run-entry" data-testid={`run-data-${key}`}>
            <Space size={8}>
              {isTrigger && <StepIcon name={trigger.app_name} appId={trigger.app_id} provider={trigger.provider} />}
              <Typography.Text strong>{isTrigger ? trigger.app_name : key}</Typography.Text>
              {isTrigger && <Tag>Trigger</Tag>}
            </Space>
            <KeyValues data={value} />
            <JsonToggle data={value} testId={`run-json-${key}`} />
          </div>
        );
      })}
    </div>
  );
}
