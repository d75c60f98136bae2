/** Constants of the app-account area (spec §9 of both documents). */

/** The OAuth popup is polled this often to notice that it closed. */
export const OAUTH_POLL_MS = 2000;
export const OAUTH_POPUP_WIDTH = 800;
export const OAUTH_POPUP_HEIGHT = 600;
/** The window name of the popup: a second New Account focuses it instead of opening another. */
export const OAUTH_POPUP_NAME = 'konnectz-oauth';
/** The page the provider redirects back to (registered as the OAuth2 redirect URL). */
export const OAUTH_RESPONSE_PATH = '/oauth/response';
/** sessionStorage key of the popup's pending authorisation (app id), kept across the provider's redirect. */
export const OAUTH_PENDING_KEY = 'konnectz.oauth.pending';

export const MSG_IN_USE = 'Cannot delete this account as it contains active Konnectz';
export const MSG_RENAMED = 'Successfully Changed the name of Account';
export const MSG_NO_ACCOUNT = 'No Account Found.';
export const MSG_ADD_ACCOUNT = 'Please add an account to continue.';
export const MSG_SOMETHING_WRONG = 'Something went wrong.';
export const notManageableMessage = (appName: string) => `${appName} is not manageable.`;
