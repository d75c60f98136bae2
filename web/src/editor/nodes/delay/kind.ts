import type { KindDefinition } from '../../kinds';

/** The delay add-on (older drafts: timer): waits before the next step; it has no Set Delay of its own. */
const delay: KindDefinition = {
  kind: 'delay',
  providers: ['delay'],
  legacyProviders: ['timer'],
  nodeType: 'InHouse',
  label: { name: 'Delay', description: 'Waits before the next step.' },
  fixedEvent: { id: 'delay', name: 'Delay' },
  timer: false,
};

export default delay;

declare module '../../model/types' {
  interface NodeKindMap {
    InHouse: true;
  }
}
