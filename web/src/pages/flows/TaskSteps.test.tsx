import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import type { TaskLog } from '../../api/models';
import { mockFetch, renderAt } from '../../test/utils';
import { answerOf, formatDate, formatDuration, kvRows, RunData, StepList, stepPath, summarise, toolCallsOf, waitedWords, waitOf } from './TaskSteps';

const log: TaskLog = {
  id: 31,
  konnect_id: 2,
  status: 'SUCCESS',
  task_date: '2026-11-21T10:00:02Z',
  data: { 'node-1': { amount: 12, customer: { name: 'Ada', address: { city: 'London' } } }, 'node-2': { output: 'ADA' } },
  run_id: 'r1',
  attempts: 1,
};

const reply = {
  trigger: { step_id: 'node-1', app_name: 'Webhook', app_id: 1, provider: 'webhook' },
  tasks: [
    {
      id: 7,
      step_id: 'node-2',
      app_name: 'Formatter',
      app_id: 12,
      provider: 'formatter',
      status: 'SUCCESS',
      started_at: '2026-11-21T10:00:00.500Z',
      task_date: '2026-11-21T10:00:02Z',
      duration_ms: 1500,
      data: {
        input: { operation: 'text.upper', input: 'ada' },
        output: { output: 'ADA' },
        error: null,
        waited_seconds: 1.4,
        wait_reason: "Waited 1.4 s for the rate budget of Slack (account 'Work'): 1 request/s",
      },
    },
    {
      id: 8,
      step_id: 'node-3',
      app_name: 'Filter',
      app_id: 13,
      provider: 'filter',
      status: 'SUCCESS',
      started_at: '2026-11-21T10:00:02Z',
      task_date: '2026-11-21T10:00:02Z',
      duration_ms: 4,
      data: { input: {}, output: null, error: null, stop: 'status is not Equal To paid' },
    },
    {
      id: 9,
      step_id: 'node-4',
      app_name: 'API Call',
      app_id: 2,
      provider: 'api',
      status: 'ERROR',
      started_at: null,
      task_date: '2026-11-21T10:00:03Z',
      duration_ms: null,
      data: { input: { url: 'https://x' }, output: null, error: 'HTTP 500 from https://x' },
    },
    {
      id: 10,
      step_id: 'node-5',
      app_name: 'API Call',
      app_id: 2,
      provider: 'api',
      status: 'ERROR',
      started_at: '2026-11-21T10:00:03Z',
      task_date: '2026-11-21T10:00:06Z',
      duration_ms: 3000,
      data: {
        input: { url: 'https://y' },
        output: { error: { message: 'HTTP 503 from https://y', status: 503 } },
        error: 'HTTP 503 from https://y',
        continued: true,
        retries: [
          { number: 1, error: 'HTTP 503 from https://y', failure: 'server', status: 503, waited_seconds: 1, started_at: '', finished_at: '' },
          { number: 2, error: 'Timed out calling https://y', failure: 'timeout', status: null, waited_seconds: 2, started_at: '', finished_at: '' },
        ],
      },
    },
  ],
};

describe('task steps', () => {
  beforeEach(() => queryClient.clear());

  it("shows a Respond step's answer to the webhook: sent with its status and body, or why not", async () => {
    const respond = (id: number, output: Record<string, unknown>) => ({
      id,
      step_id: `node-${id}`,
      app_name: 'Respond to Webhook',
      app_id: 18,
      provider: 'respond',
      status: 'SUCCESS',
      started_at: null,
      task_date: '2026-11-21T10:00:02Z',
      duration_ms: null,
      data: { input: {}, output, error: null },
    });
    const answered = { trigger: reply.trigger, tasks: [
      respond(21, { sent: true, status: 201, headers: {}, body: '{"thanks": "Ada"}', bytes: 17 }),
      respond(22, { sent: false, status: 200, headers: {}, body: 'x', bytes: 1, not_sent: 'the webhook was already answered' }),
    ] };
    mockFetch((c) => (c.url === '/api/v1/task_logs/31/tasks' ? { body: answered } : undefined));
    renderAt(<StepList logId={31} />);
    expect(await screen.findByTestId('task-answer-21')).toHaveTextContent('Answered the webhook: 201');
    expect(screen.getByTestId('task-answer-21')).toHaveTextContent('{"thanks": "Ada"}');
    expect(screen.getByTestId('task-answer-22')).toHaveTextContent('Not sent (200): the webhook was already answered');
    expect(answerOf('formatter', { sent: true, status: 200 })).toBeNull();
    expect(answerOf('respond', { sent: 'yes' })).toBeNull();
  });

  it("lists an AI Agent step's tool calls: each tool with its input, output or error, and duration", async () => {
    const agent = {
      trigger: reply.trigger,
      tasks: [
        {
          id: 30,
          step_id: 'node-2',
          app_name: 'AI Agent',
          app_id: 24,
          provider: 'agent',
          status: 'SUCCESS',
          started_at: null,
          task_date: '2026-11-21T10:00:02Z',
          duration_ms: 900,
          data: {
            input: { prompt: 'File it' },
            output: {
              answer: 'Filed as 42',
              iterations: 3,
              tool_calls: [
                { id: 'c1', tool: 'create_ticket', kind: 'app_action', iteration: 1, input: { title: 'Printer' }, output: { id: 42 }, error: null, duration_ms: 212 },
                { id: 'c2', tool: 'nope', kind: null, iteration: 2, input: {}, output: null, error: "unknown tool 'nope'", duration_ms: 0 },
                { id: 'c3', tool: 'notify', kind: 'addon', iteration: 2, input: { text: 'hi' }, output: { ok: true }, error: null, duration_ms: 1500, recalled: true },
                {
                  id: 'c4',
                  tool: 'lookup',
                  kind: 'flow',
                  iteration: 3,
                  input: { email: 'ada@example.com' },
                  output: { customer: 'C-1' },
                  error: null,
                  duration_ms: 800,
                  detail: { run_id: 'abcdef0123456789', flow_id: 41, flow_name: 'Look up', status: 'SUCCESS' },
                },
                { id: 'c5', tool: 'add', kind: 'mcp', iteration: 3, input: { a: 1 }, output: { result: 2 }, error: null, duration_ms: 30 },
              ],
            },
            error: null,
          },
        },
      ],
    };
    mockFetch((c) => (c.url === '/api/v1/task_logs/31/tasks' ? { body: agent } : undefined));
    renderAt(<StepList logId={31} />);
    const tools = await screen.findByTestId('task-tools-30');
    expect(tools).toHaveTextContent('Tool calls (5)');
    const first = within(tools).getByTestId('task-tool-30-0');
    expect(first).toHaveTextContent('create_ticket');
    expect(first).toHaveTextContent('app action');
    expect(within(first).getByTestId('task-tool-duration-30-0')).toHaveTextContent('212 ms');
    expect(within(within(first).getByTestId('task-tool-input-30-0')).getByText('Printer')).toBeInTheDocument();
    expect(within(within(first).getByTestId('task-tool-output-30-0')).getByText('42')).toBeInTheDocument();
    expect(within(tools).getByTestId('task-tool-error-30-1')).toHaveTextContent("unknown tool 'nope'");
    expect(within(tools).queryByTestId('task-tool-output-30-1')).not.toBeInTheDocument();
    expect(within(tools).getByTestId('task-tool-30-2')).toHaveTextContent('from the journal');
    expect(within(tools).getByTestId('task-tool-duration-30-2')).toHaveTextContent('1.5 s');
    expect(within(tools).getByTestId('task-tool-30-2')).toHaveTextContent('add-on');
    // a sub-flow tool links its called run's flow; an MCP tool is named so
    expect(within(tools).getByTestId('task-tool-30-3')).toHaveTextContent('sub-flow');
    const run = within(tools).getByTestId('task-tool-run-30-3');
    expect(run).toHaveTextContent('Look up · run abcdef01');
    expect(within(run).getByRole('link', { name: 'Look up' })).toHaveAttribute('href', '/create/41');
    expect(within(tools).getByTestId('task-tool-30-4')).toHaveTextContent('MCP tool');
    expect(toolCallsOf('formatter', { tool_calls: [] })).toEqual([]);
    expect(toolCallsOf('agent', { tool_calls: [{ tool: 1 }] })).toEqual([]);
  });

  it('shows what a Wait for a Call or an Approval waited for, since and until when, and what resumed it', async () => {
    const waited = (id: number, provider: string, wait: Record<string, unknown>, output: Record<string, unknown>) => ({
      id,
      step_id: `node-${id}`,
      app_name: provider === 'approval' ? 'Approval' : 'Wait for a Call',
      app_id: provider === 'approval' ? 22 : 21,
      provider,
      status: 'SUCCESS',
      started_at: '2026-11-21T09:00:00Z',
      task_date: '2026-11-21T10:00:02Z',
      duration_ms: null,
      data: { input: { timeout: 1 }, output, error: null, waited_seconds: 1, wait_reason: 'Waited for … (the words)', wait },
    });
    const since = '2026-11-21T09:00:00Z';
    const tasks = [
      waited(41, 'wait', { waiting_for: 'a call to its resume URL', since, until: '2026-11-21T11:00:00Z', resumed_by: 'call', resumed_at: '2026-11-21T09:12:03Z' }, { answer: 'yes', timed_out: false }),
      waited(42, 'approval', { waiting_for: 'approval by a@x.io, b@x.io', since, until: '2026-11-23T09:00:00Z', resumed_by: 'call', resumed_at: '2026-11-22T13:00:00Z', decided_by: 'b@x.io' }, { decision: 'rejected', approved: false, decided_by: 'b@x.io', timed_out: false }),
      waited(43, 'wait', { waiting_for: 'a call to its resume URL', since, until: '2026-11-21T09:00:02Z', resumed_by: 'timeout', resumed_at: '2026-11-21T09:00:02Z' }, { timed_out: true }),
    ];
    mockFetch((c) => (c.url === '/api/v1/task_logs/31/tasks' ? { body: { trigger: reply.trigger, tasks } } : undefined));
    renderAt(<StepList logId={31} />);

    const call = await screen.findByTestId('task-wait-41');
    expect(call).toHaveTextContent('Waited for a call to its resume URL (12 min 3 s)');
    expect(call).toHaveTextContent(`Since${formatDate(since)}`);
    expect(call).toHaveTextContent(`Until (timeout)${formatDate('2026-11-21T11:00:00Z')}`);
    expect(screen.getByTestId('task-wait-resumed-41')).toHaveTextContent(`by a call to its resume URL at ${formatDate('2026-11-21T09:12:03Z')}`);
    expect(within(call).queryByTestId('task-wait-approvals-41')).not.toBeInTheDocument();
    expect(call).not.toHaveTextContent('(the words)'); // the record replaces the sentence

    const approval = screen.getByTestId('task-wait-42');
    expect(approval).toHaveTextContent('Waited for approval by a@x.io, b@x.io (1 d 4 h)');
    expect(screen.getByTestId('task-wait-resumed-42')).toHaveTextContent(`by the decision of b@x.io at ${formatDate('2026-11-22T13:00:00Z')}: rejected`);
    expect(within(approval).getByTestId('task-wait-approvals-42')).toHaveAttribute('href', '/approvals');

    expect(screen.getByTestId('task-wait-resumed-43')).toHaveTextContent('by its timeout');
    expect(screen.getByTestId('task-wait-43')).toHaveClass('ant-alert-warning');

    // Older runs and foreign shapes: no record (the words show as before).
    expect(waitOf({ waiting_for: 'x', since, until: since, resumed_by: 'later', resumed_at: since })).toBeNull();
    expect(waitOf('a call')).toBeNull();
    expect(waitedWords(3 * 3_600_000 + 20 * 60_000)).toBe('3 h 20 min');
    expect(waitedWords(48 * 3_600_000)).toBe('2 d');
  });

  it('formats durations and summarises nested values', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(2000)).toBe('2 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(null)).toBeNull();
    expect(summarise(['a', 'b'])).toBe('a, b');
    expect(summarise([{ a: 1 }, { a: 2 }])).toBe('2 items');
    expect(summarise({ a: 1, b: 2 })).toBe('2 fields');
    expect(kvRows(log.data['node-1'])).toEqual([
      { key: 'amount', value: '12' },
      { key: 'customer.name', value: 'Ada' },
      { key: 'customer.address', value: '1 field' },
    ]);
  });

  it("lists each step by its app's name and icon, its status in words, its duration and its input/output rows; JSON on demand", async () => {
    const calls = mockFetch((c) => (c.url === '/api/v1/task_logs/31/tasks' ? { body: reply } : undefined));
    renderAt(<StepList logId={31} />);
    const step = await screen.findByTestId('task-7');
    expect(within(step).getByTestId('task-app-7')).toHaveTextContent('Formatter');
    expect(step.querySelector('img[data-testid="app-icon-probe"]')).toHaveAttribute('src', '/api/v1/apps/12/icon');
    expect(within(step).getByTestId('task-status-7')).toHaveTextContent('Success');
    expect(within(step).getByTestId('task-duration-7')).toHaveTextContent('1.5 s');
    // A step that waited for its account's rate budget says so.
    expect(within(step).getByTestId('task-wait-7')).toHaveTextContent(
      "Waited 1.4 s for the rate budget of Slack (account 'Work'): 1 request/s",
    );
    const input = within(step).getByTestId('task-input-7');
    expect(within(input).getByText('operation')).toBeInTheDocument();
    expect(within(input).getByText('text.upper')).toBeInTheDocument();
    expect(within(within(step).getByTestId('task-output-7')).getByText('ADA')).toBeInTheDocument();
    // No raw JSON until asked for.
    expect(within(step).queryByTestId('task-json-7')).not.toBeInTheDocument();
    await userEvent.click(within(step).getByTestId('task-json-7-toggle'));
    expect(within(step).getByTestId('task-json-7')).toHaveTextContent('"operation": "text.upper"');
    await userEvent.click(within(step).getByTestId('task-json-7-toggle'));
    expect(within(step).queryByTestId('task-json-7')).not.toBeInTheDocument();

    // A filter that stopped the run: its words, colour and reason.
    const filter = screen.getByTestId('task-8');
    expect(within(filter).getByTestId('task-status-8')).toHaveTextContent('Stopped by filter');
    expect(within(filter).getByTestId('task-status-8').className).toContain('gold');
    expect(within(filter).getByTestId('task-stop-8')).toHaveTextContent('status is not Equal To paid');
    // A failed step shows its error in red; an old task without a start shows no duration.
    const failed = screen.getByTestId('task-9');
    expect(within(failed).getByTestId('task-status-9')).toHaveTextContent('Error');
    expect(within(failed).getByTestId('task-status-9').className).toContain('red');
    expect(within(failed).getByTestId('task-error-9')).toHaveTextContent('HTTP 500 from https://x');
    expect(within(failed).queryByTestId('task-duration-9')).not.toBeInTheDocument();
    expect(within(failed).queryByTestId('task-wait-9')).not.toBeInTheDocument();
    expect(within(failed).queryByTestId('task-retries-9')).not.toBeInTheDocument();
    // A step retried by its error policy lists its failed tries; one that let the run go on says so.
    const retried = screen.getByTestId('task-10');
    expect(within(retried).getByTestId('task-retries-10')).toHaveTextContent('Tried 3 times: 2 tries failed before the last');
    expect(within(retried).getByTestId('task-retries-10')).toHaveTextContent('Timed out calling https://y — waited 2 s');
    expect(within(retried).getByTestId('task-continued-10')).toHaveTextContent('the run went on');
    expect(calls.filter((c) => c.url === '/api/v1/task_logs/31/tasks')).toHaveLength(1);
  });

  it("shows the run's trigger data under the trigger's name, not the steps' entries again", async () => {
    mockFetch((c) => (c.url === '/api/v1/task_logs/31/tasks' ? { body: reply } : undefined));
    renderAt(<RunData log={log} />);
    const trigger = await screen.findByTestId('run-data-node-1');
    expect(trigger).toHaveTextContent('Webhook');
    expect(trigger).toHaveTextContent('Trigger');
    expect(within(trigger).getByText('customer.name')).toBeInTheDocument();
    expect(screen.queryByTestId('run-data-node-2')).not.toBeInTheDocument();
  });

  it("labels each step of a router's path with the path's name and shows a skipped path's steps as Skipped, with the reason", async () => {
    const paths = {
      trigger: reply.trigger,
      tasks: [
        { ...reply.tasks[0], id: 20, step_id: 'node-2', app_name: 'Router', provider: 'router', data: { input: {}, output: { paths: ['Big'], mode: 'parallel' }, error: null } },
        { ...reply.tasks[0], id: 21, step_id: 'node-3', app_name: 'Formatter', data: { ...reply.tasks[0].data, path: 'node-2/Big' } },
        {
          ...reply.tasks[0],
          id: 22,
          step_id: 'node-4',
          app_name: 'Hash',
          status: 'SKIPPED',
          duration_ms: null,
          data: { input: {}, output: null, error: null, stop: 'Path Small: its conditions did not pass', path: 'node-2/Small' },
        },
        { ...reply.tasks[0], id: 23, step_id: 'node-5', app_name: 'Join', provider: 'join', data: { input: {}, output: { Big: { output: 'ADA' }, Small: null }, error: null } },
      ],
    };
    mockFetch((c) => (c.url === '/api/v1/task_logs/32/tasks' ? { body: paths } : undefined));
    renderAt(<StepList logId={32} />);
    const ran = await screen.findByTestId('task-21');
    expect(within(ran).getByTestId('task-path-21')).toHaveTextContent('Big');
    expect(within(ran).getByTestId('task-status-21')).toHaveTextContent('Success');
    const skipped = screen.getByTestId('task-22');
    expect(within(skipped).getByTestId('task-path-22')).toHaveTextContent('Small');
    const status = within(skipped).getByTestId('task-status-22');
    expect(status).toHaveTextContent('Skipped');
    expect(status).toHaveAttribute('data-status', 'SKIPPED');
    expect(status.className).toContain('purple');
    expect(within(skipped).getByTestId('task-stop-22')).toHaveTextContent('Path Small: its conditions did not pass');
    // A skipped step did not run: no input/output rows.
    expect(within(skipped).queryByTestId('task-input-22')).not.toBeInTheDocument();
    // Steps not on a path have no path label.
    expect(within(screen.getByTestId('task-20')).queryByTestId('task-path-20')).not.toBeInTheDocument();
    expect(within(screen.getByTestId('task-23')).queryByTestId('task-path-23')).not.toBeInTheDocument();
  });

  it('reads the path from the task or its data, the name after the router id', () => {
    const base = reply.tasks[0] as Parameters<typeof stepPath>[0];
    expect(stepPath({ ...base, data: { path: 'node-2/Big orders' } })).toEqual({ router: 'node-2', name: 'Big orders' });
    expect(stepPath({ ...base, path: 'node-9/A' } as unknown as typeof base)).toEqual({ router: 'node-9', name: 'A' });
    expect(stepPath(base)).toBeNull();
  });
});
