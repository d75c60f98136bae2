import { AlertOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';

/** The error-flow trigger (docs/on-error.md): a run for every failed run of the account's other flows. */
const flowFailed: KindDefinition = {
  kind: 'flowFailed',
  providers: ['flow_failed'],
  nodeType: 'InHouse',
  label: {
    name: 'When a flow fails',
    description: 'Starts the flow once for every failed run of your other flows (an error flow).',
    icon: <AlertOutlined />,
  },
  fixedEvent: { id: 'flow_failed', name: 'Flow Failed' },
  triggerOnly: true,
  configFetch: false,
  optionsFetch: false,
  testDrawer: false,
  initialData: () => ({ selectedAddonsValue: { flows: [] } }),
  summary: (data) => {
    const flows = (data.selectedAddonsValue?.flows as number[] | undefined) ?? [];
    return flows.length ? `${flows.length} flow${flows.length === 1 ? '' : 's'}` : 'Every flow';
  },
};

export default flowFailed;
