/** App accounts in the SPA: the Manage Accounts drawer, the OAuth popup and its response page. */
export { ManageAccountsDrawer, type AppAccount, type ManageAccountsDrawerProps } from './ManageAccountsDrawer';
export { TokenFieldsForm, type TokenFieldsFormProps } from './TokenFieldsForm';
export { OAuthResponsePage } from './OAuthResponsePage';
export { useOAuthPopup, oauthPopupUrl, type OAuthPopup } from './useOAuthPopup';
export { isManageable, manageRefusal, type ManagedApp } from './manageable';
export * from './constants';
