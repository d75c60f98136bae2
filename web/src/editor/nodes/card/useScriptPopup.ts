/**
 * The script-triggers popup of a custom-script trigger (canvas spec §4 Trigger handling): a test
 * reply with `konnect_custom.script_id` opens /script-triggers/{script_id} in an 800x600 popup and
 * sets the node's trigger flag (`customScriptOpen`); the popup is polled every second and, once it
 * closed, the flag is reset and `onClosed` runs (the editor tests the trigger again to pick up the
 * script's request). Opening while the popup is open focuses it.
 */
import { useCallback } from 'react';
import { usePolledPopup } from '../../../lib/usePolledPopup';
import { useEditorStoreApi } from '../../EditorContext';
import { POPUP_HEIGHT, POPUP_WIDTH, SCRIPT_POPUP_POLL_MS } from '../../model/rules';

export const SCRIPT_POPUP_NAME = 'konnectz-script-trigger';
export const SCRIPT_TRIGGERS_PATH = '/script-triggers';
export const POPUP_BLOCKED = 'Allow pop-ups for this site to see the script to install.';

export function scriptPopupUrl(scriptId: number, origin = window.location.origin): string {
  return `${origin}${SCRIPT_TRIGGERS_PATH}/${scriptId}`;
}

export function useScriptPopup(nodeId: string, onClosed: () => void) {
  const store = useEditorStoreApi();
  const setFlag = useCallback((open: boolean) => store.getState().patchNode(nodeId, { customScriptOpen: open }), [store, nodeId]);
  const whenClosed = useCallback(() => {
    setFlag(false);
    onClosed();
  }, [setFlag, onClosed]);
  const popup = usePolledPopup(
    { name: SCRIPT_POPUP_NAME, width: POPUP_WIDTH, height: POPUP_HEIGHT, pollMs: SCRIPT_POPUP_POLL_MS },
    whenClosed,
  );
  const { open: openUrl, isOpen } = popup;

  /** Opens (or focuses) the popup; false when the browser blocked it. */
  const open = useCallback(
    (scriptId: number): boolean => {
      const wasOpen = isOpen();
      if (!openUrl(scriptPopupUrl(scriptId))) return false;
      if (!wasOpen) setFlag(true);
      return true;
    },
    [isOpen, openUrl, setFlag],
  );

  return { open };
}
