import { ApiOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import { defaultApiValue } from '../../model/operations';
import type { ApiSelectedValue } from '../../model/types';
import { ApiNode } from './ApiNode';

export interface ApiData {
  /** Method, URL, headers, params and body of the call (headers/params may be secret). */
  selectedValue?: ApiSelectedValue;
}

declare module '../../model/types' {
  interface NodeKindMap {
    Api: true;
  }
  interface KindDataMap {
    api: ApiData;
  }
}

/** The API Call add-on: any HTTP request. */
const api: KindDefinition<'api'> = {
  kind: 'api',
  providers: ['api'],
  nodeType: 'Api',
  component: ApiNode,
  label: { name: 'API Call', description: 'Makes an HTTP request.', icon: <ApiOutlined /> },
  fixedEvent: { id: 'api_call', name: 'Make an API Call' },
  initialData: () => ({ selectedValue: defaultApiValue() }),
};

export default api;
