import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch } from '../../test/utils';
import { Providers } from '../../theme/Providers';
import { EditorProvider } from '../EditorContext';
import { toCanvasJson } from '../model/canvas';
import { buildSaveRequest } from '../save';
import { createEditorStore, hasUnsavedChanges } from '../store';
import { webhookApp } from '../model/fixtures';
import { RunSettingsButton, toSettings, toValues } from './RunSettings';

const FLOWS = [
  { id: 5, konnect_name: 'This flow', status: 'Draft' },
  { id: 6, konnect_name: 'Notify ops', status: 'Published' },
  { id: 8, konnect_name: 'Old one', status: 'Draft' },
];

function renderButton() {
  const calls = mockFetch((c) =>
    c.url.startsWith('/api/v1/konnects?') ? { body: { konnects: FLOWS, total_konnects: FLOWS.length } } : undefined,
  );
  const store = createEditorStore();
  store.getState().setKonnectId(5);
  render(
    <Providers>
      <EditorProvider store={store}>
        <RunSettingsButton />
      </EditorProvider>
    </Providers>,
  );
  return { store, calls };
}

async function findOption(label: string): Promise<HTMLElement> {
  const all = await screen.findAllByTitle(label);
  const option = all.find((el) => el.classList.contains('ant-select-item-option'));
  if (!option) throw new Error(`no option ${label}`);
  return option;
}

afterEach(() => {
  vi.restoreAllMocks();
  queryClient.clear();
});

describe('run settings values', () => {
  it('turns the fields into canvas_json.runControl and back', () => {
    const settings = toSettings({ deadline: 10, deadlineUnit: 'minutes', maxConcurrency: 2, email: true, alertFlow: 6, digestMinutes: 15 });
    expect(settings).toEqual({ deadlineSeconds: 600, maxConcurrency: 2, alert: { email: true, runKonnectId: 6, digestMinutes: 15 } });
    expect(toValues(settings)).toEqual({ deadline: 10, deadlineUnit: 'minutes', maxConcurrency: 2, email: true, alertFlow: 6, digestMinutes: 15 });
    expect(toValues({ deadlineSeconds: 90, maxConcurrency: null, alert: null })).toMatchObject({ deadline: 90, deadlineUnit: 'seconds', email: false });
  });

  it('saves nothing when nothing is set, and no alert without a way to send it', () => {
    expect(toSettings(toValues(null))).toBeNull();
    expect(toSettings({ ...toValues(null), maxConcurrency: 1 })).toEqual({ deadlineSeconds: null, maxConcurrency: 1, alert: null });
  });

  it('goes into the saved document, and counts as an unsaved change', () => {
    const store = createEditorStore();
    const flow = { apps: [], links: [] };
    expect(toCanvasJson(flow, 'f')).not.toHaveProperty('runControl');
    const runControl = { deadlineSeconds: null, maxConcurrency: 3, alert: null };
    expect(toCanvasJson(flow, 'f', runControl).runControl).toEqual(runControl);
    store.getState().loadSaved(flow, { konnectId: 5, flowName: 'f', runControl });
    expect(hasUnsavedChanges(store.getState())).toBe(false);
    store.getState().setRunControl({ ...runControl, maxConcurrency: 4 });
    expect(hasUnsavedChanges(store.getState())).toBe(true);
  });

  it('is sent with save and publish', () => {
    const store = createEditorStore({
      apps: [{ id: 'node-1', type: 'WebhookInner', position: { x: 0, y: 0 }, data: { app_detail: { ...webhookApp, app_index: 1 } } } as never],
    });
    store.getState().setKonnectId(5);
    store.getState().setRunControl({ deadlineSeconds: 30, maxConcurrency: null, alert: null });
    expect(buildSaveRequest(store.getState(), true)?.canvas_json.runControl).toEqual({ deadlineSeconds: 30, maxConcurrency: null, alert: null });
  });
});

describe('the Run settings dialog', () => {
  it('sets a deadline, a limit and an alert to another of my flows, and shows them again', async () => {
    const { store, calls } = renderButton();
    fireEvent.click(screen.getByTestId('run-settings'));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByTestId('run-deadline'), { target: { value: '5' } });
    fireEvent.mouseDown(within(within(dialog).getByTestId('run-deadline-unit')).getByRole('combobox'));
    fireEvent.click(await findOption('minutes'));
    fireEvent.change(within(dialog).getByTestId('run-max-concurrency'), { target: { value: '2' } });
    fireEvent.click(within(dialog).getByTestId('run-alert-email'));
    fireEvent.mouseDown(within(within(dialog).getByTestId('run-alert-flow')).getByRole('combobox'));
    fireEvent.click(await findOption('Notify ops'));
    expect(screen.queryAllByTitle('This flow').filter((el) => el.classList.contains('ant-select-item-option'))).toEqual([]);
    expect(await findOption('Old one (not published)')).toBeTruthy();
    fireEvent.change(within(dialog).getByTestId('run-alert-digest'), { target: { value: '15' } });
    fireEvent.click(screen.getByTestId('run-settings-save'));
    await waitFor(() =>
      expect(store.getState().runControl).toEqual({
        deadlineSeconds: 300,
        maxConcurrency: 2,
        alert: { email: true, runKonnectId: 6, digestMinutes: 15 },
      }),
    );
    expect(calls.some((c) => c.url === '/api/v1/konnects?page_size=200&page_index=1')).toBe(true);

    fireEvent.click(screen.getByTestId('run-settings'));
    const again = await screen.findByRole('dialog');
    await waitFor(() => expect(within(again).getByTestId('run-deadline')).toHaveValue('5'));
    expect(within(again).getByTestId('run-max-concurrency')).toHaveValue('2');
    expect(within(again).getByTestId('run-alert-email')).toBeChecked();
    expect(within(again).getByTestId('run-alert-digest')).toHaveValue('15');
    expect(await within(again).findByTitle('Notify ops')).toBeTruthy();
  });

  it('refuses a limit above 100 and keeps the settings as they were', async () => {
    const { store } = renderButton();
    fireEvent.click(screen.getByTestId('run-settings'));
    const dialog = await screen.findByRole('dialog');
    const limit = within(dialog).getByTestId('run-max-concurrency');
    fireEvent.change(limit, { target: { value: '101' } });
    fireEvent.click(screen.getByTestId('run-settings-save'));
    expect(await within(dialog).findByText('Between 1 and 100')).toBeInTheDocument();
    expect(store.getState().runControl).toBeNull();
  });
});
