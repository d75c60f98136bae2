import { ReactFlowProvider } from '@xyflow/react';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../../api/typed';
import { mockFetch, renderAt } from '../../../test/utils';
import { EditorProvider } from '../../EditorContext';
import { EditorCanvas } from '../../EditorCanvas';
import { toCanvasJson } from '../../model/canvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation, type Operation } from '../../model/operations';
import type { Flow } from '../../model/types';
import { testBlocker } from '../card/useNodeTest';
import { createEditorStore } from '../../store';
import callFlow, { callBlocker } from './kind';

const callApp = addOn('call_flow', 'Call a Flow', 23);
const callable = {
  flows: [
    {
      id: 41,
      name: 'Place order',
      description: 'Places an order and answers its number',
      inputs: [
        { key: 'email', label: 'Customer e-mail', type: 'email', required: true },
        { key: 'quantity', label: 'Quantity', type: 'number', required: false },
      ],
    },
    { id: 42, name: 'Refund', description: '', inputs: [] },
  ],
};

/** Opens an antd Select by its test id (the id lands on its root or on its search input). */
function open(testId: string) {
  const found = screen.getByTestId(testId);
  fireEvent.mouseDown(found.querySelector('.ant-select-selector') ?? found.closest('.ant-select')?.querySelector('.ant-select-selector') ?? found);
}

function flowWithCall(): Flow {
  const ops: Operation[] = [
    { type: 'addTrigger', app: webhookApp },
    { type: 'addAction', app: callApp },
  ];
  return ops.reduce(applyOperation, { apps: [], links: [] } as Flow);
}

describe('the Call a Flow kind', () => {
  it('is added as an InHouse node with its event, waiting by default, saved in selectedAddonsValue', () => {
    const flow = flowWithCall();
    const node = flow.apps[1];
    expect(node.type).toBe('InHouse');
    expect(node.data.selectedEvent).toEqual({ id: 'call_flow', name: 'Call a Flow' });
    const saved = toCanvasJson(flow, 'f').apps[1];
    expect(saved.data.selectedAddonsValue).toEqual({ mode: 'wait', inputs: {}, timeout: 1, timeout_unit: 'hours', on_timeout: 'fail' });
    expect(callFlow.summary?.(node.data)).toBe('No flow chosen');
  });

  it('refuses a test until a flow is chosen, and a timeout that is not a whole number', () => {
    const flow = flowWithCall();
    expect(testBlocker(flow.apps, null, flow.apps[1])).toBe('Choose the flow to call');
    expect(callBlocker({ flow: 41, mode: 'wait', timeout: '0' })).toMatch(/at least 1/);
    expect(callBlocker({ flow: 41, mode: 'wait', timeout: '1.5' })).toMatch(/whole number/);
    expect(callBlocker({ flow: 41, mode: 'go_on', timeout: 'x' })).toBeNull();
    expect(callFlow.summary?.({ ...flow.apps[1].data, selectedAddonsValue: { flow: 41, mode: 'go_on' } })).toBe('Flow 41 · goes on');
  });
});

describe('the Call a Flow card', () => {
  beforeEach(() => queryClient.clear());

  it('lists the callable flows, shows the chosen flow’s inputs as mapped fields, and keeps mode and timeout', async () => {
    const store = createEditorStore(flowWithCall());
    const calls = mockFetch((c) => (c.url.split('?')[0] === '/api/v1/konnects/callable' ? { body: callable } : undefined));
    renderAt(
      <ReactFlowProvider>
        <EditorProvider store={store}>
          <EditorCanvas />
        </EditorProvider>
      </ReactFlowProvider>,
    );
    await screen.findByTestId('call-flow-flow-node-2');
    await waitFor(() => expect(calls.some((c) => c.url.startsWith('/api/v1/konnects/callable'))).toBe(true));
    open('call-flow-flow-node-2');
    fireEvent.click(await screen.findByTestId('call-flow-option-41'));
    await waitFor(() => expect(store.getState().apps[1].data.selectedAddonsValue?.flow).toBe(41));
    // The called flow's inputs, each a field taking references.
    expect(await screen.findByText('Customer e-mail')).toBeInTheDocument();
    expect(screen.getByText('Places an order and answers its number')).toBeInTheDocument();
    const email = screen.getByTestId('call-flow-input-node-2-email');
    expect(email).toBeInTheDocument();
    expect(screen.getByTestId('call-flow-timeout-node-2')).toHaveValue('1');
    fireEvent.change(screen.getByTestId('call-flow-timeout-node-2'), { target: { value: '30' } });
    await waitFor(() => expect(store.getState().apps[1].data.selectedAddonsValue?.timeout).toBe('30'));
    // Going on at once hides the timeout.
    open('call-flow-mode-node-2');
    fireEvent.click(await screen.findByText('Go on at once'));
    await waitFor(() => expect(store.getState().apps[1].data.selectedAddonsValue?.mode).toBe('go_on'));
    expect(screen.queryByTestId('call-flow-timeout-node-2')).toBeNull();
  });

  it('says so when the chosen flow is no longer callable', async () => {
    const flow = flowWithCall();
    flow.apps[1].data.selectedAddonsValue = { flow: 99, mode: 'wait', inputs: {} };
    const store = createEditorStore(flow);
    mockFetch((c) => (c.url.split('?')[0] === '/api/v1/konnects/callable' ? { body: callable } : undefined));
    renderAt(
      <ReactFlowProvider>
        <EditorProvider store={store}>
          <EditorCanvas />
        </EditorProvider>
      </ReactFlowProvider>,
    );
    expect(await screen.findByTestId('call-flow-missing-node-2')).toHaveTextContent('Flow 99 is no longer published');
  });
});
