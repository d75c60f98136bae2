import { ApiOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import type { ApiSelectedValue } from '../../model/types';

export interface ApiData {
  /** Method, URL, headers, params and body of the call (headers/params may be secret). */
  selectedValue?: ApiSelectedValue;
}

/** A new API Call's request: a JSON POST to no URL yet. */
export function defaultApiValue(): ApiSelectedValue {
  return {
    wrap_in_array: 'NO',
    payload_type: 'JSON',
    apiDetails: { method: 'POST', endpointURL: '', headers: [], params: [], body: [] },
  };
}

/** The API Call add-on: any HTTP request (its card is ApiNode.tsx). */
const api: KindDefinition<'api'> = {
  kind: 'api',
  providers: ['api'],
  nodeType: 'Api',
  label: { name: 'API Call', description: 'Makes an HTTP request.', icon: <ApiOutlined /> },
  fixedEvent: { id: 'api_call', name: 'Make an API Call' },
  initialData: () => ({ selectedValue: defaultApiValue() }),
};

export default api;

declare module '../../model/types' {
  interface NodeKindMap {
    Api: true;
  }
  interface KindDataMap {
    api: ApiData;
  }
}
