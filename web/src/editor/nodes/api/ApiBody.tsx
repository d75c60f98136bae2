import { Select } from 'antd';
import { useCallback } from 'react';
import { useEditorStoreApi } from '../../EditorContext';
import { KeyValueList } from '../../components/KeyValueList';
import { RefInput } from '../../components/RefInput';
import { defaultApiValue } from './kind';
import type { ApiDetails, ApiSelectedValue, FlowNodeData, HttpMethod } from '../../model/types';

export const HTTP_METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** API call: method, endpoint URL, headers, params, JSON body, wrap in array. */
export function ApiBody({ id, data }: { id: string; data: FlowNodeData }) {
  const store = useEditorStoreApi();
  const value = (data.selectedValue as ApiSelectedValue | undefined) ?? defaultApiValue();
  const details = value.apiDetails;

  const setValue = useCallback(
    (patch: Partial<ApiSelectedValue>, field?: string) => {
      const current = (store.getState().apps.find((n) => n.id === id)?.data.selectedValue as ApiSelectedValue | undefined) ?? defaultApiValue();
      store.getState().dispatch({ type: 'updateNodeData', id, patch: { selectedValue: { ...current, ...patch } } }, field === undefined ? undefined : `${id}:${field}`);
    },
    [store, id],
  );

  const setDetails = useCallback(
    (patch: Partial<ApiDetails>, field?: string) => {
      const current = (store.getState().apps.find((n) => n.id === id)?.data.selectedValue as ApiSelectedValue | undefined) ?? defaultApiValue();
      setValue({ apiDetails: { ...current.apiDetails, ...patch } }, field);
    },
    [store, id, setValue],
  );

  return (
    <>
      <div className="kz-field">
        <span className="kz-field-label">Method</span>
        <Select<HttpMethod>
          className="nodrag"
          value={details.method}
          onChange={(method) => setDetails({ method })}
          options={HTTP_METHODS.map((m) => ({ value: m, label: m, 'data-testid': `api-method-option-${m}` }))}
          data-testid="api-method"
        />
      </div>
      <div className="kz-field">
        <span className="kz-field-label">Endpoint URL</span>
        <RefInput
          nodeId={id}
          value={details.endpointURL}
          placeholder="https://example.com/api"
          onChange={(endpointURL) => setDetails({ endpointURL }, 'endpointURL')}
          testId="api-endpoint-url"
        />
      </div>
      <KeyValueList nodeId={id} label="Headers" items={details.headers} onChange={(headers) => setDetails({ headers }, `headers-${headers.length}`)} testId="api-header" secrets />
      <KeyValueList nodeId={id} label="Params" items={details.params} onChange={(params) => setDetails({ params }, `params-${params.length}`)} testId="api-param" secrets />
      <KeyValueList nodeId={id} label="Body" items={details.body} onChange={(body) => setDetails({ body }, `body-${body.length}`)} testId="api-body" />
      <div className="kz-field-row">
        <div className="kz-field">
          <span className="kz-field-label">Payload Type</span>
          <Select
            className="nodrag"
            value={value.payload_type}
            onChange={(payload_type) => setValue({ payload_type })}
            options={[{ value: 'JSON', label: 'JSON' }]}
            data-testid="api-payload-type"
          />
        </div>
        <div className="kz-field">
          <span className="kz-field-label">Wrap Request in Array</span>
          <Select<'NO' | 'YES'>
            className="nodrag"
            value={value.wrap_in_array}
            onChange={(wrap_in_array) => setValue({ wrap_in_array })}
            options={[
              { value: 'NO', label: 'NO' },
              { value: 'YES', label: 'YES' },
            ]}
            data-testid="api-wrap-in-array"
          />
        </div>
      </div>
    </>
  );
}
