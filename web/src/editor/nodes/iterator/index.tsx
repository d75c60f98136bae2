/** The iterator card: its body in the common NodeCard frame (its definition is kind.ts). */
import { bodyNode } from '../card/bodyNode';
import { IteratorBody } from './IteratorBody';

export default bodyNode(IteratorBody, 'IteratorNode');
