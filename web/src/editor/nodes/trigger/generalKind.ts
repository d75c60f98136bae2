import type { KindDefinition } from '../../kinds';
import type { NodeKind } from '../../model/types';
import { bodyNode } from '../card/bodyNode';
import { AppNodeBody } from './AppNodeBody';

/**
 * A catalogue app's general case on one side of the flow (KindDefinition.general): the kind named
 * after its side, no provider of its own, and the app card (event, account, configuration).
 */
export function generalKind(side: 'trigger' | 'action', nodeType: NodeKind, label: KindDefinition['label']): KindDefinition {
  return { kind: side, providers: [], general: side, nodeType, component: bodyNode(AppNodeBody, nodeType), label };
}
