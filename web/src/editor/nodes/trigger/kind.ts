import { generalKind } from './generalKind';

/** The general case as the first step: any catalogue app no other kind names (event, account, configuration). */
const trigger = generalKind('trigger', 'TriggerNode', {
  name: 'App trigger',
  description: 'A catalogue app event that starts the flow.',
});

export default trigger;

declare module '../../model/types' {
  interface NodeKindMap {
    TriggerNode: true;
  }
}
