import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { beforeAll, describe, expect, it } from 'vitest';
import { EditorProvider } from '../EditorContext';
import { apiApp, webhookApp } from '../model/fixtures';
import { applyOperation } from '../model/operations';
import type { FlowNode } from '../model/types';
import { createEditorStore } from '../store';
import { RefInput } from './RefInput';

function flowWithTestedTrigger(raw: unknown) {
  const flow = [
    { type: 'addTrigger' as const, app: webhookApp },
    { type: 'addAction' as const, app: apiApp },
  ].reduce(applyOperation, { apps: [], links: [] });
  const [trigger, action] = flow.apps;
  const testedTrigger: FlowNode = {
    ...trigger,
    data: { ...trigger.data, response_payload: { display_message: 'ok', raw_response: raw, konnect_activity_id: 1, konnect_id: 2, test_status: 'Success' } },
  };
  return createEditorStore({ apps: [testedTrigger, action], links: flow.links });
}

function Field({ initial, seen }: { initial: string; seen: string[] }) {
  const [value, setValue] = useState(initial);
  return (
    <RefInput
      nodeId="node-2"
      value={value}
      onChange={(v) => {
        seen.push(v);
        setValue(v);
      }}
      testId="field"
    />
  );
}

function renderField(initial: string, raw: unknown = { amount: 12, email: 'a@b.c', customer: { email: 'c@d.e', name: 'Ada' } }) {
  const seen: string[] = [];
  render(
    <EditorProvider store={flowWithTestedTrigger(raw)}>
      <Field initial={initial} seen={seen} />
    </EditorProvider>,
  );
  return seen;
}

describe('RefInput', () => {
  beforeAll(() => {
    // jsdom has no scrollIntoView (the mention list scrolls its active item into view).
    Element.prototype.scrollIntoView ??= () => undefined;
  });

  it('shows each reference as a chip in words, the template on hover, and keeps the stored text', () => {
    renderField('Total: {{node-1.amount}} for {{node-1.customer.name}} ({{node-7.gone}})');
    const chips = within(screen.getByTestId('field-refs')).getAllByTestId('ref-chip');
    expect(chips.map((c) => c.textContent)).toEqual(['Webhook › amount', 'Webhook › customer › name', 'node-7 › gone']);
    expect(chips[0]).toHaveAttribute('title', '{{node-1.amount}}');
    expect(chips[1]).toHaveAttribute('title', '{{node-1.customer.name}}');
    // A step no longer on the canvas shows red.
    expect(chips[2].className).toContain('error');
    expect(chips[2]).toHaveAttribute('title', '{{node-7.gone}} (this step is no longer in the flow)');
    expect(screen.getByTestId('field')).toHaveValue('Total: {{node-1.amount}} for {{node-1.customer.name}} ({{node-7.gone}})');
  });

  it('shows no chips for plain text', () => {
    renderField('plain text');
    expect(screen.queryByTestId('field-refs')).not.toBeInTheDocument();
  });

  it("'@em' lists only the existing keys containing 'em'; choosing one stores the template", async () => {
    const seen = renderField('');
    await userEvent.type(screen.getByTestId('field'), '@em');
    const list = await screen.findByRole('menu');
    await waitFor(() => expect(within(list).getAllByRole('menuitem').map((i) => i.textContent)).toEqual(['Webhook › email', 'Webhook › customer › email']));
    expect(within(list).queryByText(/amount|name/)).not.toBeInTheDocument();
    await userEvent.click(within(list).getByText('Webhook › email'));
    await waitFor(() => expect(seen[seen.length - 1]).toBe('{{node-1.email}}'));
    expect(within(screen.getByTestId('field-refs')).getByTestId('ref-chip')).toHaveTextContent('Webhook › email');
  });

  it("says so when no key matches ('No field matches')", async () => {
    renderField('');
    await userEvent.type(screen.getByTestId('field'), '@zz');
    expect(await screen.findByTestId('ref-none')).toHaveTextContent("No field matches 'zz'");
    expect(screen.queryByText(/Webhook ›/)).not.toBeInTheDocument();
  });
});
