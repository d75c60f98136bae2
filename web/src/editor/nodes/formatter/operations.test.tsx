import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import { EditorProvider } from '../../EditorContext';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation } from '../../model/operations';
import { createEditorStore } from '../../store';
import { AddonSelect } from '../card/AddonFields';
import { nodeSummary } from '../card/Header';
import { GENERATOR_KINDS, GENERATOR_LABELS, GENERATOR_OPTION_LABELS } from '../generator/labels';
import { FORMATTER_LABELS, FORMATTER_OPERATIONS, OPERATION_ALIASES, operationLabel, operationOptions, OPTION_LABELS } from './operations';

const flow = [
  { type: 'addTrigger' as const, app: webhookApp },
  { type: 'addAction' as const, app: addOn('formatter', 'Formatter') },
].reduce(applyOperation, { apps: [], links: [] });

describe('formatter operations in words', () => {
  beforeAll(() => {
    Element.prototype.scrollIntoView ??= () => undefined;
  });

  it('every operation has a label that is not its id', () => {
    const ids = Object.keys(FORMATTER_OPERATIONS);
    expect(ids.length).toBeGreaterThan(20);
    for (const id of ids) {
      const label = operationLabel(id);
      expect(label.trim(), id).not.toBe('');
      expect(label, id).not.toBe(id);
      expect(label, id).not.toMatch(/[._]/);
    }
    expect(Object.keys(FORMATTER_LABELS).sort()).toEqual([...ids].sort());
    expect(operationLabel('text.upper')).toBe('Uppercase');
    expect(operationLabel('number.arithmetic')).toBe('Arithmetic');
    expect(operationLabel('date.convert_timezone')).toBe('Convert time zone');
    // The catalogue's short names read the same.
    for (const [alias, id] of Object.entries(OPERATION_ALIASES)) expect(operationLabel(alias)).toBe(operationLabel(id));
    // Every option field an operation shows has words too.
    for (const opt of Object.values(FORMATTER_OPERATIONS).flat()) expect(OPTION_LABELS[opt], opt).toBeTruthy();
  });

  it('the select lists every operation once, grouped, in words with its id as secondary text', () => {
    const groups = operationOptions();
    expect(groups.map((g) => g.label)).toEqual(['Text', 'Numbers', 'Dates']);
    const all = groups.flatMap((g) => g.options);
    expect(all.map((o) => o.value).sort()).toEqual(Object.keys(FORMATTER_OPERATIONS).sort());
    for (const o of all) expect(o.hint).toBe(o.value);
  });

  it('generator kinds and their options have words', () => {
    for (const kind of Object.keys(GENERATOR_KINDS)) {
      expect(GENERATOR_LABELS[kind], kind).toBeTruthy();
      expect(GENERATOR_LABELS[kind]).not.toBe(kind);
      for (const opt of GENERATOR_KINDS[kind]) expect(GENERATOR_OPTION_LABELS[opt], opt).toBeTruthy();
    }
  });

  it('the node summary on the canvas names the operation in words', () => {
    const data = flow.apps[1].data;
    expect(nodeSummary({ ...data, selectedAddonsValue: { operation: 'number.arithmetic' } })).toBe('Arithmetic');
    expect(nodeSummary({ ...data, selectedAddonsValue: { operation: 'uppercase' } })).toBe('Uppercase');
    expect(nodeSummary({ ...data, selectedAddonsValue: {} })).toBe(data.selectedEvent?.name ?? null);
    expect(nodeSummary({ ...data, selectedAddonsValue: {} })).not.toMatch(/\./);
  });

  it('the operation select shows words, the id as secondary text, and searches both', async () => {
    const store = createEditorStore(flow);
    render(
      <EditorProvider store={store}>
        <AddonSelect id="node-2" data={flow.apps[1].data} name="operation" label="Operation" options={operationOptions()} />
      </EditorProvider>,
    );
    const select = screen.getByTestId('addon-node-2-operation');
    await userEvent.click(within(select).getByRole('combobox'));
    const option = await screen.findByTestId('addon-option-operation-date.convert_timezone');
    expect(option).toHaveTextContent('Convert time zone');
    expect(option).toHaveTextContent('date.convert_timezone');
    expect(screen.queryByText('text.upper', { selector: '.ant-select-item-option-content > .kz-option > span:first-child' })).toBeNull();
    await userEvent.type(within(select).getByRole('combobox'), 'upper');
    expect(await screen.findByTestId('addon-option-operation-text.upper')).toHaveTextContent('Uppercase');
    await userEvent.click(screen.getByText('Uppercase'));
    expect(store.getState().apps[1].data.selectedAddonsValue?.operation).toBe('text.upper');
  });
});
