/**
 * A named popup window centred on the opener and polled until it closes (the OAuth account popup,
 * the script-triggers popup). `open(url)` opens it, or focuses it when it is still open, and
 * returns false when the browser blocked it; `onClosed` runs once the window is closed.
 */
import { useCallback, useEffect, useRef } from 'react';

export interface PolledPopup {
  open: (url: string) => boolean;
  /** True while a popup opened by this hook is open. */
  isOpen: () => boolean;
}

export function popupFeatures(width: number, height: number): string {
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - width) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - height) / 2));
  return `popup=yes,width=${width},height=${height},left=${left},top=${top}`;
}

export function usePolledPopup(
  options: { name: string; width: number; height: number; pollMs: number },
  onClosed: () => void,
): PolledPopup {
  const { name, width, height, pollMs } = options;
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

  const isOpen = useCallback(() => popup.current !== null && !popup.current.closed, []);

  const open = useCallback(
    (url: string): boolean => {
      if (popup.current && !popup.current.closed) {
        popup.current.focus();
        return true;
      }
      const win = window.open(url, name, popupFeatures(width, height));
      if (!win) return false;
      popup.current = win;
      win.focus();
      stop();
      timer.current = setInterval(() => {
        if (popup.current && !popup.current.closed) return;
        stop();
        popup.current = null;
        closed.current();
      }, pollMs);
      return true;
    },
    [name, width, height, pollMs, stop],
  );

  return { open, isOpen };
}
