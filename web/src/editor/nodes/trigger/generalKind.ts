import type { KindDefinition } from '../../kinds';
import type { NodeKind } from '../../model/types';

/**
 * A catalogue app's general case on one side of the flow (KindDefinition.general): the kind named
 * after its side, no provider of its own (its card, index.tsx, is the app card: event, account, configuration).
 */
export function generalKind(side: 'trigger' | 'action', nodeType: NodeKind, label: KindDefinition['label']): KindDefinition {
  return { kind: side, providers: [], general: side, nodeType, label };
}
