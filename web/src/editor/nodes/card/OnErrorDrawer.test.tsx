import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Providers } from '../../../theme/Providers';
import { EditorProvider } from '../../EditorContext';
import { toCanvasJson } from '../../model/canvas';
import { apiApp, webhookApp } from '../../model/fixtures';
import { createEditorStore } from '../../store';
import { DEFAULT_ON_ERROR, hasOnError, OnErrorForm, onErrorToSave } from './OnErrorDrawer';

function renderForm() {
  const store = createEditorStore();
  store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
  store.getState().dispatch({ type: 'addAction', app: apiApp });
  const id = store.getState().apps[1].id;
  render(
    <Providers>
      <EditorProvider store={store}>
        <OnErrorForm id={id} />
      </EditorProvider>
    </Providers>,
  );
  const saved = () => store.getState().apps[1].data.onError;
  return { store, id, saved };
}

describe('on error values', () => {
  it('stores nothing for a policy that asks for nothing, and needs a kind of error to retry', () => {
    expect(onErrorToSave(DEFAULT_ON_ERROR)).toBeNull();
    expect(hasOnError(DEFAULT_ON_ERROR)).toBe(false);
    expect(onErrorToSave({ ...DEFAULT_ON_ERROR, retries: 2, retryOn: [] })).toBe('incomplete');
    expect(onErrorToSave({ ...DEFAULT_ON_ERROR, continueOnError: true })).toEqual({ ...DEFAULT_ON_ERROR, continueOnError: true });
    // The longest wait is never below the first (the api refuses it).
    expect(onErrorToSave({ ...DEFAULT_ON_ERROR, retries: 1, delaySeconds: 30, maxDelaySeconds: 5 })).toMatchObject({ maxDelaySeconds: 30 });
  });
});

describe('the On Error form', () => {
  it('saves retries and continue on error into the node, and clears them', () => {
    const { id, saved } = renderForm();
    expect(screen.queryByTestId(`on-error-backoff-${id}`)).toBeNull(); // no retries: no backoff to choose
    fireEvent.change(screen.getByTestId(`on-error-retries-${id}`), { target: { value: '3' } });
    expect(screen.getByTestId(`on-error-backoff-${id}`)).toBeTruthy();
    fireEvent.click(screen.getByTestId(`on-error-on-connection-${id}`));
    fireEvent.click(screen.getByTestId(`on-error-continue-${id}`));
    fireEvent.click(screen.getByTestId(`on-error-save-${id}`));
    expect(saved()).toEqual({
      retries: 3,
      backoff: 'exponential',
      delaySeconds: 2,
      maxDelaySeconds: 60,
      retryOn: ['timeout', 'server', 'rate_limited'],
      continueOnError: true,
    });
    fireEvent.click(screen.getByTestId(`on-error-clear-${id}`));
    expect(saved()).toBeNull();
  });

  it('refuses to save retries on no kind of error, and the saved policy is in the canvas json', () => {
    const { store, id, saved } = renderForm();
    fireEvent.change(screen.getByTestId(`on-error-retries-${id}`), { target: { value: '2' } });
    for (const kind of ['connection', 'timeout', 'server', 'rate_limited']) fireEvent.click(screen.getByTestId(`on-error-on-${kind}-${id}`));
    expect(screen.getByTestId(`on-error-incomplete-${id}`)).toBeTruthy();
    expect((screen.getByTestId(`on-error-save-${id}`) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId(`on-error-on-server-${id}`));
    fireEvent.click(screen.getByTestId(`on-error-save-${id}`));
    expect(saved()).toMatchObject({ retries: 2, retryOn: ['server'] });
    const canvas = toCanvasJson(store.getState(), 'f');
    expect(canvas.apps[1].data.onError).toMatchObject({ retries: 2, retryOn: ['server'] });
  });
});
