import type { KindDefinition } from '../../kinds';
import type { KeyValue } from '../../model/types';

export interface DataForwarderData {
  keyList?: KeyValue[];
}

/** The data forwarder add-on: forwards chosen keys (an Api node type, like the API call). */
const dataForwarder: KindDefinition<'data_forwarder'> = {
  kind: 'dataForwarder',
  providers: ['data_forwarder'],
  nodeType: 'Api',
  label: { name: 'Data Forwarder', description: 'Forwards chosen keys and values.' },
  fixedEvent: { id: 'forward', name: 'Forward Data' },
  initialData: () => ({ keyList: [{ key: '', value: '' }] }),
};

export default dataForwarder;

declare module '../../model/types' {
  interface NodeKindMap {
    Api: true;
  }
  interface KindDataMap {
    data_forwarder: DataForwarderData;
  }
}
