import { PartitionOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';

/** The modes of a Call a Flow step: wait for the called run's result, or go on at once. */
export const CALL_MODES = [
  { value: 'wait', label: 'Wait for its result' },
  { value: 'go_on', label: 'Go on at once' },
] as const;

/** Its timeout's units and what a timeout does (as the api's call_flow step). */
export const TIMEOUT_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export const ON_TIMEOUT = [
  { value: 'fail', label: 'Stop the run with an error' },
  { value: 'stop', label: 'Stop the run' },
  { value: 'continue', label: 'Go on (output: timed_out true)' },
] as const;

/** What the card stores in `selectedAddonsValue` (what the api's compiler reads, docs/sub-flows.md). */
export interface CallFlowValues {
  flow?: number;
  inputs?: Record<string, string>;
  mode?: 'wait' | 'go_on';
  timeout?: number | string;
  timeout_unit?: string;
  on_timeout?: string;
}

export function callValues(data: { selectedAddonsValue?: Record<string, unknown> | null }): CallFlowValues {
  return (data.selectedAddonsValue ?? {}) as CallFlowValues;
}

/** Why the step cannot be tested yet (null: it can). */
export function callBlocker(values: CallFlowValues): string | null {
  if (typeof values.flow !== 'number') return 'Choose the flow to call';
  if ((values.mode ?? 'wait') === 'wait') {
    const timeout = Number(values.timeout ?? 1);
    if (!Number.isInteger(timeout) || timeout < 1) return 'The timeout must be a whole number of at least 1';
  }
  return null;
}

/**
 * Call a Flow (docs/sub-flows.md): runs another published flow of the account (one that starts with
 * "Called by a flow or AI tool") with its inputs mapped from earlier steps, then waits for its result
 * (its Respond body, or its last step's output) or goes on at once.
 */
const callFlow: KindDefinition = {
  kind: 'callFlow',
  providers: ['call_flow'],
  nodeType: 'InHouse',
  label: {
    name: 'Call a Flow',
    description: 'Runs another of your published flows with its inputs, then waits for its result or goes on at once.',
    icon: <PartitionOutlined />,
  },
  fixedEvent: { id: 'call_flow', name: 'Call a Flow' },
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({ selectedAddonsValue: { mode: 'wait', inputs: {}, timeout: 1, timeout_unit: 'hours', on_timeout: 'fail' } }),
  testBlocker: (data) => callBlocker(callValues(data)),
  summary: (data) => {
    const values = callValues(data);
    if (typeof values.flow !== 'number') return 'No flow chosen';
    return (values.mode ?? 'wait') === 'wait' ? `Flow ${values.flow} · waits` : `Flow ${values.flow} · goes on`;
  },
};

export default callFlow;
