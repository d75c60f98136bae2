import type { KindDefinition } from '../../kinds';
import type { KeyValue } from '../../model/types';
import { bodyNode } from '../card/bodyNode';
import { DataForwarderBody } from './DataForwarderBody';

export interface DataForwarderData {
  keyList?: KeyValue[];
}

declare module '../../model/types' {
  interface NodeKindMap {
    Api: true;
  }
  interface KindDataMap {
    data_forwarder: DataForwarderData;
  }
}

/** The data forwarder add-on: forwards chosen keys (an Api node type, like the API call). */
const dataForwarder: KindDefinition<'data_forwarder'> = {
  kind: 'dataForwarder',
  providers: ['data_forwarder'],
  nodeType: 'Api',
  component: bodyNode(DataForwarderBody, 'DataForwarderNode'),
  label: { name: 'Data Forwarder', description: 'Forwards chosen keys and values.' },
  fixedEvent: { id: 'forward', name: 'Forward Data' },
  initialData: () => ({ keyList: [{ key: '', value: '' }] }),
};

export default dataForwarder;
