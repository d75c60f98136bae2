import { PauseCircleOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import { timeoutProblem, timeoutWords } from '../card/WaitTimeout';

/** Whole default of a new Wait: one hour, then the run goes on with timed_out true (catalogue/apps/wait.yaml). */
export const WAIT_DEFAULT_UNIT = 'hours';

/**
 * Wait for a Call (docs/waits.md): the run waits, holding nothing, until its resume URL is called
 * (the call's body is the step's output) or its timeout. Its settings are in `selectedAddonsValue`:
 * `timeout`, `timeout_unit`, `on_timeout`, as the api's compiler (konnectz_contracts.steps.wait) reads them.
 */
const wait: KindDefinition = {
  kind: 'wait',
  providers: ['wait'],
  nodeType: 'InHouse',
  label: {
    name: 'Wait for a Call',
    description: 'The run waits until its resume URL is called, or until its timeout.',
    icon: <PauseCircleOutlined />,
  },
  fixedEvent: { id: 'wait_for_call', name: 'Wait for a Call' },
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({ selectedAddonsValue: { timeout: 1, timeout_unit: WAIT_DEFAULT_UNIT, on_timeout: 'continue' } }),
  testBlocker: (data) => timeoutProblem(data, WAIT_DEFAULT_UNIT),
  summary: (data) => {
    const words = timeoutWords(data, WAIT_DEFAULT_UNIT);
    return words ? `Waits up to ${words} for a call` : 'Wait for a Call';
  },
  // What a call brings is the caller's; what is always there:
  outputKeysIn: () => ['timed_out'],
};

export default wait;
