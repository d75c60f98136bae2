import { LinkOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';

/** The webhook trigger: catches a request at its URL (Capture Response). */
const webhook: KindDefinition = {
  kind: 'webhook',
  providers: ['webhook'],
  nodeType: 'WebhookInner',
  label: { name: 'Webhook', description: 'Starts the flow when a request reaches its URL.', icon: <LinkOutlined /> },
  fixedEvent: { id: 'catch_hook', name: 'Catch Webhook' },
  appDetail: { webhook_url: null },
  triggerOnly: true,
  configFetch: false,
  optionsFetch: false,
};

export default webhook;

declare module '../../model/types' {
  interface NodeKindMap {
    WebhookInner: true;
  }
}
