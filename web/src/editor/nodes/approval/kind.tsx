import { AuditOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import type { FlowNodeData } from '../../model/types';
import { timeoutProblem, timeoutWords } from '../card/WaitTimeout';

export const APPROVAL_DEFAULT_UNIT = 'days';
/** At most this many approvers (konnectz_contracts.steps.approval.MAX_APPROVERS). */
export const MAX_APPROVERS = 20;
/** What an Approval answers once decided (later steps map them before any run). */
export const APPROVAL_OUTPUTS = ['decision', 'approved', 'decided_by', 'timed_out'] as const;

/** The approvers typed: addresses (or references) separated by commas, semicolons or spaces, each once. */
export function approversOf(data: FlowNodeData): string[] {
  const text = String(data.selectedAddonsValue?.approvers ?? '');
  const seen: string[] = [];
  for (const part of text.replace(/;/g, ',').split(/[,\s]+/)) {
    const one = part.trim().toLowerCase();
    if (one && !seen.includes(one)) seen.push(one);
  }
  return seen;
}

/**
 * Approval (docs/waits.md, "Approval"): the run waits until an approver approves or rejects it by a
 * mailed link or on the Approvals page, or until its timeout. Its settings are in
 * `selectedAddonsValue`: `approvers`, `message`, `timeout`, `timeout_unit`, `on_timeout`
 * (konnectz_contracts.steps.approval).
 */
const approval: KindDefinition = {
  kind: 'approval',
  providers: ['approval'],
  nodeType: 'InHouse',
  label: {
    name: 'Approval',
    description: 'The run waits until an approver approves or rejects it, or until its timeout.',
    icon: <AuditOutlined />,
  },
  fixedEvent: { id: 'ask_approval', name: 'Ask for Approval' },
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({ selectedAddonsValue: { approvers: '', message: '', timeout: 1, timeout_unit: APPROVAL_DEFAULT_UNIT, on_timeout: 'continue' } }),
  testBlocker: (data) => {
    const approvers = approversOf(data);
    if (approvers.length === 0) return 'Enter who approves: the e-mail of the owner or of team members';
    if (approvers.length > MAX_APPROVERS) return `At most ${MAX_APPROVERS} approvers`;
    return timeoutProblem(data, APPROVAL_DEFAULT_UNIT);
  },
  summary: (data) => {
    const n = approversOf(data).length;
    const words = timeoutWords(data, APPROVAL_DEFAULT_UNIT);
    if (n === 0) return 'Ask for Approval';
    return `${n} approver${n === 1 ? '' : 's'}${words ? ` · up to ${words}` : ''}`;
  },
  outputKeysIn: () => [...APPROVAL_OUTPUTS],
};

export default approval;
