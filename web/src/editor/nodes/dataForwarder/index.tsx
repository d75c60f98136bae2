/** The dataForwarder card: its body in the common NodeCard frame (its definition is kind.ts). */
import { bodyNode } from '../card/bodyNode';
import { DataForwarderBody } from './DataForwarderBody';

export default bodyNode(DataForwarderBody, 'DataForwarderNode');
