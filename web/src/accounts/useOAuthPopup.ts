/**
 * The OAuth account popup: an 800x600 window at /oauth/response/{appId}/{token} on this host.
 *
 * The popup page asks the api for the provider's consent URL, goes there, comes back to
 * /oauth/response with the code and completes the authorisation, then closes itself. The opener
 * polls the window every 2 s; once it is closed, `onClosed` runs (the account list reloads).
 * Opening while a popup is still open focuses that popup instead of opening a second one.
 */
import { useCallback } from 'react';
import { sessionToken } from '../lib/session';
import { usePolledPopup } from '../lib/usePolledPopup';
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

export interface OAuthPopup {
  /** Opens (or focuses) the popup for `appId`; false when the browser blocked it. */
  open: (appId: number) => boolean;
  /** True while a popup opened by this hook is open. */
  isOpen: () => boolean;
}

export function useOAuthPopup(onClosed: () => void): OAuthPopup {
  const popup = usePolledPopup(
    { name: OAUTH_POPUP_NAME, width: OAUTH_POPUP_WIDTH, height: OAUTH_POPUP_HEIGHT, pollMs: OAUTH_POLL_MS },
    onClosed,
  );
  const { open: openUrl, isOpen } = popup;
  const open = useCallback((appId: number) => openUrl(oauthPopupUrl(appId, sessionToken() ?? '')), [openUrl]);
  return { open, isOpen };
}
