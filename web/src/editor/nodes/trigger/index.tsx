/** The general trigger's card: the catalogue app body (event, account, configuration) in the NodeCard (its definition is kind.ts). */
import { bodyNode } from '../card/bodyNode';
import { AppNodeBody } from './AppNodeBody';

export default bodyNode(AppNodeBody, 'TriggerNode');
