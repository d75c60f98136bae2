/**
 * The OAuth account popup: an 800x600 window at /oauth/response/{appId}/{token} on this host.
 *
 * The popup page asks the api for the provider's consent URL, goes there, comes back to
 * /oauth/response with the code and completes the authorisation, then closes itself. The opener
 * polls the window every 2 s; once it is closed, `onClosed` runs (the account list reloads).
 * Opening while a popup is still open focuses that popup instead of opening a second one.
 */
import { useCallback, useEffect, useRef } from 'react';
import { sessionToken } from '../lib/session';
import {
  OAUTH_POLL_MS,
  OAUTH_POPUP_HEIGHT,
  OAUTH_POPUP_NAME,
  OAUTH_POPUP_WIDTH,
  OAUTH_RESPONSE_PATH,
} from './constants';

export function oauthPopupUrl(appId: number, token: string, origin = window.location.origin): string {
  return `${origin}${OAUTH_RESPONSE_PATH}/${appId}/${encodeURIComponent(token)}`;
}

function popupFeatures(): string {
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - OAUTH_POPUP_WIDTH) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - OAUTH_POPUP_HEIGHT) / 2));
  return `popup=yes,width=${OAUTH_POPUP_WIDTH},height=${OAUTH_POPUP_HEIGHT},left=${left},top=${top}`;
}

export interface OAuthPopup {
  /** Opens (or focuses) the popup for `appId`; false when the browser blocked it. */
  open: (appId: number) => boolean;
  /** True while a popup opened by this hook is open. */
  isOpen: () => boolean;
}

export function useOAuthPopup(onClosed: () => void): OAuthPopup {
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
    (appId: number) => {
      if (popup.current && !popup.current.closed) {
        popup.current.focus();
        return true;
      }
      const win = window.open(oauthPopupUrl(appId, sessionToken() ?? ''), OAUTH_POPUP_NAME, popupFeatures());
      if (!win) return false;
      popup.current = win;
      win.focus();
      stop();
      timer.current = setInterval(() => {
        if (!popup.current || popup.current.closed) {
          stop();
          popup.current = null;
          closed.current();
        }
      }, OAUTH_POLL_MS);
      return true;
    },
    [stop],
  );

  return { open, isOpen };
}
