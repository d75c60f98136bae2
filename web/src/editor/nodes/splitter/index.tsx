/** The splitter card: its body in the common NodeCard frame (its definition is kind.ts). */
import { bodyNode } from '../card/bodyNode';
import { SplitterBody } from './SplitterBody';

export default bodyNode(SplitterBody, 'SplitterNode');
