import { isTriggerNode } from './operations';
import type { FlowNode } from './types';

/** The trigger cannot move backward (past an action to its right) while an action exists. */
export function triggerMovedBackward(apps: FlowNode[]): boolean {
  const trigger = apps.find(isTriggerNode);
  const actions = apps.filter((n) => !isTriggerNode(n));
  if (!trigger || actions.length === 0) return false;
  return actions.some((a) => trigger.position.x >= a.position.x);
}
