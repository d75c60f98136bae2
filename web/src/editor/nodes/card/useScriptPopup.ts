/**
 * The script-triggers popup of a custom-script trigger (canvas spec §4 Trigger handling): a test
 * reply with `konnect_custom.script_id` opens /script-triggers/{script_id} in an 800x600 popup and
 * sets the node's trigger flag (`customScriptOpen`); the popup is polled every second and, once it
 * closed, the flag is reset and `onClosed` runs (the editor tests the trigger again to pick up the
 * script's request). Opening while the popup is open focuses it.
 */
import { useCallback, useEffect, useRef } from 'react';
import { useEditorStoreApi } from '../../EditorContext';
import { POPUP_HEIGHT, POPUP_WIDTH, SCRIPT_POPUP_POLL_MS } from '../../model/rules';

export const SCRIPT_POPUP_NAME = 'konnectz-script-trigger';
export const SCRIPT_TRIGGERS_PATH = '/script-triggers';
export const POPUP_BLOCKED = 'Allow pop-ups for this site to see the script to install.';

export function scriptPopupUrl(scriptId: number, origin = window.location.origin): string {
  return `${origin}${SCRIPT_TRIGGERS_PATH}/${scriptId}`;
}

function popupFeatures(): string {
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - POPUP_WIDTH) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - POPUP_HEIGHT) / 2));
  return `popup=yes,width=${POPUP_WIDTH},height=${POPUP_HEIGHT},left=${left},top=${top}`;
}

export function useScriptPopup(nodeId: string, onClosed: () => void) {
  const store = useEditorStoreApi();
  const popup = useRef<Window | null>(null);
  const timer = useRef<ReturnType<typeof setInterval> | null>(null);
  const closed = useRef(onClosed);
  useEffect(() => {
    closed.current = onClosed;
  }, [onClosed]);

  const stop = useCallback(() => {
    if (timer.current !== null) clearInterval(timer.current);
    timer.current = null;
  }, []);
  useEffect(() => stop, [stop]);

  const setFlag = useCallback((open: boolean) => store.getState().patchNode(nodeId, { customScriptOpen: open }), [store, nodeId]);

  /** Opens (or focuses) the popup; false when the browser blocked it. */
  const open = useCallback(
    (scriptId: number): boolean => {
      if (popup.current && !popup.current.closed) {
        popup.current.focus();
        return true;
      }
      const win = window.open(scriptPopupUrl(scriptId), SCRIPT_POPUP_NAME, popupFeatures());
      if (!win) return false;
      popup.current = win;
      win.focus();
      setFlag(true);
      stop();
      timer.current = setInterval(() => {
        if (popup.current && !popup.current.closed) return;
        stop();
        popup.current = null;
        setFlag(false);
        closed.current();
      }, SCRIPT_POPUP_POLL_MS);
      return true;
    },
    [setFlag, stop],
  );

  return { open };
}
