/** The webhook card (its definition is kind.tsx). */
export { WebhookNode as default } from './WebhookNode';
