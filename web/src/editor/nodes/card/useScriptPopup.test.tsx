import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EditorProvider } from '../../EditorContext';
import { webhookApp } from '../../model/fixtures';
import { SCRIPT_POPUP_POLL_MS } from '../../model/rules';
import { createEditorStore } from '../../store';
import { SCRIPT_POPUP_NAME, useScriptPopup } from './useScriptPopup';

function setup() {
  const store = createEditorStore();
  store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
  const onClosed = vi.fn();
  const wrapper = ({ children }: { children: ReactNode }) => <EditorProvider store={store}>{children}</EditorProvider>;
  const hook = renderHook(() => useScriptPopup('node-1', onClosed), { wrapper });
  const flag = () => store.getState().apps[0].data.customScriptOpen;
  return { store, onClosed, hook, flag };
}

describe('the script-triggers popup of a custom-script trigger', () => {
  const popup = { closed: false, focus: vi.fn() };
  let open: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    vi.useFakeTimers();
    popup.closed = false;
    popup.focus.mockClear();
    open = vi.spyOn(window, 'open').mockReturnValue(popup as unknown as Window);
  });
  afterEach(() => {
    vi.useRealTimers();
    open.mockRestore();
  });

  it('opens /script-triggers/{id} 800x600, polls it every second and resets the trigger flag when it closes', () => {
    const { onClosed, hook, flag } = setup();
    expect(SCRIPT_POPUP_POLL_MS).toBe(1000);
    let opened = false;
    act(() => {
      opened = hook.result.current.open(9);
    });
    expect(opened).toBe(true);
    const [url, name, features] = open.mock.calls[0] as [string, string, string];
    expect(url).toBe(`${window.location.origin}/script-triggers/9`);
    expect(name).toBe(SCRIPT_POPUP_NAME);
    expect(features).toContain('width=800');
    expect(features).toContain('height=600');
    expect(flag()).toBe(true);

    act(() => vi.advanceTimersByTime(5 * SCRIPT_POPUP_POLL_MS)); // still open: nothing happens
    expect(flag()).toBe(true);
    expect(onClosed).not.toHaveBeenCalled();

    popup.closed = true;
    act(() => vi.advanceTimersByTime(SCRIPT_POPUP_POLL_MS - 1));
    expect(flag()).toBe(true);
    act(() => vi.advanceTimersByTime(1));
    expect(flag()).toBe(false);
    expect(onClosed).toHaveBeenCalledTimes(1);
    act(() => vi.advanceTimersByTime(10 * SCRIPT_POPUP_POLL_MS)); // polling stopped
    expect(onClosed).toHaveBeenCalledTimes(1);
  });

  it('focuses the popup when it is already open, and reports a blocked popup', () => {
    const { hook, flag } = setup();
    act(() => void hook.result.current.open(9));
    act(() => void hook.result.current.open(9));
    expect(open).toHaveBeenCalledTimes(1);
    expect(popup.focus).toHaveBeenCalledTimes(2);

    popup.closed = true;
    act(() => vi.advanceTimersByTime(SCRIPT_POPUP_POLL_MS));
    open.mockReturnValue(null);
    let opened = true;
    act(() => {
      opened = hook.result.current.open(9);
    });
    expect(opened).toBe(false);
    expect(flag()).toBe(false);
  });
});
