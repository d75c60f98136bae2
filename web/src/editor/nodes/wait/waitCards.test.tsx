/** The Wait for a Call and Approval cards (docs/waits.md): their data, their rules, their fields and Test & Review. */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../../api/typed';
import { writeSession } from '../../../lib/session';
import { useSession } from '../../../lib/sessionStore';
import { RequireSession } from '../../../shell/RequireSession';
import { mockFetch, renderRoutes, type FetchCall } from '../../../test/utils';
import { CanvasEditor } from '../../CanvasEditor';
import { toCanvasJson } from '../../model/canvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation } from '../../model/operations';
import type { Flow, FlowNode } from '../../model/types';
import { nodeOutputKeys } from '../../references';
import approval from '../approval/kind';
import { testBlocker } from '../card/useNodeTest';
import wait from './kind';

const empty: Flow = { apps: [], links: [] };
const waitApp = addOn('wait', 'Wait for a Call', 21);
const approvalApp = addOn('approval', 'Approval', 22);

function flowWith(app: typeof waitApp): Flow {
  return applyOperation(applyOperation(empty, { type: 'addTrigger', app: webhookApp }), { type: 'addAction', app });
}

const withValues = (node: FlowNode, values: Record<string, unknown>) => ({ ...node.data, selectedAddonsValue: { ...node.data.selectedAddonsValue, ...values } });

describe('the Wait for a Call and Approval kinds', () => {
  it('are added as InHouse nodes with their event and defaults, saved where the api compiles them from', () => {
    const node = flowWith(waitApp).apps[1];
    expect(node.type).toBe('InHouse');
    expect(node.data.selectedEvent).toEqual({ id: 'wait_for_call', name: 'Wait for a Call' });
    const saved = toCanvasJson(flowWith(waitApp), 'f').apps[1];
    expect(saved.data.selectedAddonsValue).toEqual({ timeout: 1, timeout_unit: 'hours', on_timeout: 'continue' });

    const asked = toCanvasJson(flowWith(approvalApp), 'f').apps[1];
    expect(asked.type).toBe('InHouse');
    expect(asked.data.selectedEvent).toEqual({ id: 'ask_approval', name: 'Ask for Approval' });
    expect(asked.data.selectedAddonsValue).toMatchObject({ approvers: '', timeout: 1, timeout_unit: 'days', on_timeout: 'continue' });
  });

  it('refuse a test without a usable timeout or approver, as the api refuses to publish them', () => {
    const flow = flowWith(waitApp);
    const node = flow.apps[1];
    expect(wait.testBlocker?.(withValues(node, { timeout: '' }))).toBe('Enter the timeout: how long the run waits at most');
    expect(wait.testBlocker?.(withValues(node, { timeout: 0 }))).toBe('The timeout is a whole number of at least 1');
    expect(wait.testBlocker?.(withValues(node, { timeout: 1.5 }))).toBe('The timeout is a whole number of at least 1');
    expect(wait.testBlocker?.(withValues(node, { timeout: 367, timeout_unit: 'days' }))).toBe('A wait lasts at most 366 days');
    expect(wait.testBlocker?.(withValues(node, { timeout: 366, timeout_unit: 'days' }))).toBeNull();
    expect(testBlocker(flow.apps, null, node)).not.toBe('Enter the timeout: how long the run waits at most');

    const asked = flowWith(approvalApp).apps[1];
    expect(approval.testBlocker?.(asked.data)).toBe('Enter who approves: the e-mail of the owner or of team members');
    const many = Array.from({ length: 21 }, (_, i) => `p${i}@x.io`).join(', ');
    expect(approval.testBlocker?.(withValues(asked, { approvers: many }))).toBe('At most 20 approvers');
    expect(approval.testBlocker?.(withValues(asked, { approvers: 'a@x.io; A@x.io b@x.io' }))).toBeNull();
    expect(approval.summary?.(withValues(asked, { approvers: 'a@x.io; A@x.io b@x.io', timeout: 2 }))).toBe('2 approvers · up to 2 days');
    expect(wait.summary?.(withValues(node, { timeout: 1, timeout_unit: 'hours' }))).toBe('Waits up to 1 hour for a call');
  });

  it("an approval's decision can be mapped by later steps before any test", () => {
    const flow = flowWith(approvalApp);
    expect(nodeOutputKeys(flow.apps[1], flow)).toEqual(['decision', 'approved', 'decided_by', 'timed_out']);
  });
});

const triggerReply = {
  test_status: 'Success',
  display_message: 'Webhook tested',
  raw_response: { order: 'A-1' },
  konnect_id: 9,
  konnect_activity_id: 3,
  webhook_url: 'http://h/hooks/t',
};

function backend(action: unknown) {
  return mockFetch((c: FetchCall) => {
    const path = c.url.split('?')[0];
    if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp], total_apps: 1 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [], total_apps: 0 } };
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [waitApp, approvalApp], total_apps: 2 } };
    if (path === '/api/v1/konnects/test_and_review') {
      const isAction = (c.body as { node_id?: string }).node_id === 'node-2';
      return { body: isAction ? { ...triggerReply, display_message: 'Tested', raw_response: action, konnect_activity_id: 5 } : triggerReply };
    }
    return undefined;
  });
}

async function editorWith(tile: string, action: unknown) {
  const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
  writeSession(session);
  useSession.setState({ session });
  const calls = backend(action);
  renderRoutes([{ path: '/create', element: <RequireSession><CanvasEditor /></RequireSession> }], '/create');
  await userEvent.click(await screen.findByTestId('app-tile-webhook'));
  await userEvent.click(screen.getByTestId('node-test-node-1'));
  await userEvent.click(await screen.findByTestId('trigger-test-proceed-node-1'));
  await waitFor(() => expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success'));
  await userEvent.click(screen.getByTestId('add-ons'));
  await userEvent.click(await screen.findByTestId(`app-tile-${tile}`));
  const card = await screen.findByTestId('node-node-2');
  const tests = () => calls.filter((c) => c.url === '/api/v1/konnects/test_and_review').map((c) => c.body as { node_id: string; canvas_json: { apps: FlowNode[] } });
  return { card, tests };
}

async function choose(testId: string, option: string) {
  const select = screen.getByTestId(testId);
  fireEvent.mouseDown(select.querySelector('.ant-select-selector') ?? select);
  fireEvent.click(await screen.findByTestId(option));
}

describe('the Wait for a Call card', () => {
  beforeEach(() => queryClient.clear());

  it('shows the resume URL reference, edits the timeout and tests the node with its settings', async () => {
    const { card, tests } = await editorWith('wait', { timed_out: false });
    expect(within(card).getByTestId('wait-resume-ref-node-2')).toHaveTextContent('{{node-2.resume_url}}');
    expect(within(card).getByTestId('wait-resume-node-2')).toHaveTextContent('in a step before this one');
    expect(within(card).getByTestId('node-summary-node-2')).toHaveTextContent('Waits up to 1 hour for a call');

    fireEvent.change(within(card).getByTestId('wait-timeout-node-2'), { target: { value: '2' } });
    await choose('wait-unit-node-2', 'wait-unit-option-days');
    await choose('wait-on-timeout-node-2', 'wait-on-timeout-option-fail');
    await waitFor(() => expect(within(card).getByTestId('node-summary-node-2')).toHaveTextContent('Waits up to 2 days for a call'));

    fireEvent.change(within(card).getByTestId('wait-timeout-node-2'), { target: { value: '' } });
    await userEvent.click(within(card).getByTestId('node-test-node-2'));
    expect(await screen.findByText('Enter the timeout: how long the run waits at most')).toBeInTheDocument();
    expect(tests().filter((t) => t.node_id === 'node-2')).toHaveLength(0);

    fireEvent.change(within(card).getByTestId('wait-timeout-node-2'), { target: { value: '2' } });
    await userEvent.click(within(card).getByTestId('node-test-node-2'));
    await waitFor(() => expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Success'));
    const sent = tests().find((t) => t.node_id === 'node-2')!;
    const node = sent.canvas_json.apps.find((n) => n.id === 'node-2')!;
    expect(node.data.selectedAddonsValue).toEqual({ timeout: 2, timeout_unit: 'days', on_timeout: 'fail' });
  });
});

describe('the Approval card', () => {
  beforeEach(() => queryClient.clear());

  it('takes approvers and a message with references, refuses a test without approvers, and tests with a sample decision', async () => {
    const sample = { decision: 'approved', approved: true, decided_by: 'owner@x.io', timed_out: false };
    const { card, tests } = await editorWith('approval', sample);
    expect(within(card).getByTestId('approval-approvers-hint-node-2')).toHaveTextContent("owner or of members of the owner's team");
    await userEvent.click(within(card).getByTestId('node-test-node-2'));
    expect(await screen.findByText('Enter who approves: the e-mail of the owner or of team members')).toBeInTheDocument();
    expect(tests().filter((t) => t.node_id === 'node-2')).toHaveLength(0);

    // Typed as a whole (an '@' typed key by key opens the reference picker, which jsdom cannot scroll).
    const approvers = within(card).getByTestId('addon-node-2-approvers');
    fireEvent.change(approvers.querySelector('textarea') ?? approvers, { target: { value: 'owner@x.io, boss@x.io' } });
    await waitFor(() => expect(within(card).getByTestId('node-summary-node-2')).toHaveTextContent('2 approvers · up to 1 day'));
    await userEvent.click(within(card).getByTestId('node-test-node-2'));
    await waitFor(() => expect(screen.getByTestId('status-node-2')).toHaveAttribute('data-status', 'Success'));
    const node = tests().find((t) => t.node_id === 'node-2')!.canvas_json.apps.find((n) => n.id === 'node-2')!;
    expect(node.data.selectedAddonsValue).toMatchObject({ approvers: 'owner@x.io, boss@x.io', timeout: 1, timeout_unit: 'days', on_timeout: 'continue' });
  });
});
