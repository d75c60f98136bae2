import { generalKind } from '../trigger/generalKind';

/** The general case after the trigger: any catalogue app's action or search no other kind names. */
const action = generalKind('action', 'ActionNode', { name: 'App action', description: 'A catalogue app action or search.' });

export default action;

declare module '../../model/types' {
  interface NodeKindMap {
    ActionNode: true;
  }
}
