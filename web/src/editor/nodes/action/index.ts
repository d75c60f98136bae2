import type { KindDefinition } from '../../kinds';
import { ActionNode } from './ActionNode';

declare module '../../model/types' {
  interface NodeKindMap {
    ActionNode: true;
  }
}

/** The general case after the trigger: any catalogue app's action or search no other kind names. */
const action: KindDefinition = {
  kind: 'action',
  providers: [],
  general: 'action',
  nodeType: 'ActionNode',
  component: ActionNode,
  label: { name: 'App action', description: 'A catalogue app action or search.' },
};

export default action;
