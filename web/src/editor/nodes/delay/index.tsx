/** The delay card: its body in the common NodeCard frame (its definition is kind.ts). */
import { bodyNode } from '../card/bodyNode';
import { DelayBody } from './DelayBody';

export default bodyNode(DelayBody, 'DelayNode');
