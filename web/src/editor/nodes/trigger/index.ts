import type { KindDefinition } from '../../kinds';
import { TriggerNode } from './TriggerNode';

declare module '../../model/types' {
  interface NodeKindMap {
    TriggerNode: true;
  }
}

/** The general case as the first step: any catalogue app no other kind names (event, account, configuration). */
const trigger: KindDefinition = {
  kind: 'trigger',
  providers: [],
  general: 'trigger',
  nodeType: 'TriggerNode',
  component: TriggerNode,
  label: { name: 'App trigger', description: 'A catalogue app event that starts the flow.' },
};

export default trigger;
