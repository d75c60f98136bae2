import type { KindDefinition } from '../../kinds';
import { MSG } from '../../model/rules';

/** The iterator add-on: runs the later steps once per item of a list; at most one per flow. */
const iterator: KindDefinition = {
  kind: 'iterator',
  providers: ['iterator'],
  nodeType: 'InHouse',
  label: { name: 'Iterator', description: 'Runs the next steps once per item of a list.' },
  fixedEvent: { id: 'iterate', name: 'Iterate Over a List' },
  onceMessage: MSG.iteratorOnce,
  // Later steps see one item of an iterator, not its {count, items}.
  outputs: (raw) =>
    raw && typeof raw === 'object' && Array.isArray((raw as { items?: unknown }).items) ? ((raw as { items: unknown[] }).items[0] ?? {}) : raw,
};

export default iterator;

declare module '../../model/types' {
  interface NodeKindMap {
    InHouse: true;
  }
}
