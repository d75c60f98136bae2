import { ReactFlowProvider } from '@xyflow/react';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../../api/typed';
import { mockFetch, renderAt } from '../../../test/utils';
import { EditorProvider } from '../../EditorContext';
import { EditorCanvas } from '../../EditorCanvas';
import { webhookApp } from '../../model/fixtures';
import { applyOperation } from '../../model/operations';
import type { Flow } from '../../model/types';
import { createEditorStore } from '../../store';
import { RESPOND_TIMEOUT_DEFAULT } from './WebhookNode';

function setup() {
  const flow = applyOperation({ apps: [], links: [] } as Flow, { type: 'addTrigger', app: webhookApp });
  const store = createEditorStore(flow);
  mockFetch(() => undefined);
  renderAt(
    <ReactFlowProvider>
      <EditorProvider store={store}>
        <EditorCanvas />
      </EditorProvider>
    </ReactFlowProvider>,
  );
  const values = () => store.getState().apps.find((n) => n.id === 'node-1')?.data.selectedAddonsValue ?? {};
  return { values };
}

describe("the webhook card's Respond setting (docs/webhook-response.md)", () => {
  beforeEach(() => queryClient.clear());

  it('answers at once by default; another choice shows the wait and writes both into the node', async () => {
    const { values } = setup();
    const select = await screen.findByTestId('webhook-respond-node-1');
    expect(select).toHaveTextContent('At once (200 with the run id)');
    expect(screen.queryByTestId('webhook-respond-timeout-node-1')).not.toBeInTheDocument();

    fireEvent.mouseDown(select.querySelector('.ant-select-selector') ?? select);
    fireEvent.click(await screen.findByTestId('webhook-respond-option-step'));
    await waitFor(() => expect(values().respond).toBe('step'));
    const timeout = screen.getByTestId('webhook-respond-timeout-node-1');
    expect(timeout).toHaveValue(String(RESPOND_TIMEOUT_DEFAULT));
    expect(screen.getByTestId('webhook-respond-field-node-1')).toHaveTextContent('the caller gets 202 with the run id');

    fireEvent.change(timeout, { target: { value: '45' } });
    await waitFor(() => expect(values().respond_timeout_seconds).toBe(45));
  });
});
