/** The error-flow trigger's card: which flows' failures start it (its definition is kind.tsx). */
import type { NodeProps } from '@xyflow/react';
import { Select } from 'antd';
import { memo } from 'react';
import { $api } from '../../../api/typed';
import { useEditor } from '../../EditorContext';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';

/** The flows offered (the first page of the account's flows, as the Run settings' alert flow). */
export const FLOWS_PAGE = 200;

function FlowFailedNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { updateAndReset } = useNodeUpdate(id);
  const konnectId = useEditor((s) => s.konnectId);
  const flows = $api.useQuery('get', '/api/v1/konnects', { params: { query: { page_size: FLOWS_PAGE, page_index: 1 } } });
  const chosen = ((data.selectedAddonsValue?.flows as number[] | undefined) ?? []).filter((v) => typeof v === 'number');
  const options = (flows.data?.konnects ?? [])
    .filter((k) => k.id !== konnectId)
    .map((k) => ({ value: k.id, label: k.konnect_name || `Flow ${k.id}`, 'data-testid': `flow-failed-option-${k.id}` }));
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">Failures of</span>
        <Select
          className="nodrag"
          mode="multiple"
          allowClear
          placeholder="Every flow of the account"
          loading={flows.isPending}
          value={chosen}
          onChange={(ids: number[]) => updateAndReset({ selectedAddonsValue: { ...data.selectedAddonsValue, flows: ids } })}
          options={options}
          optionFilterProp="label"
          data-testid={`flow-failed-flows-${id}`}
        />
        <span className="kz-field-hint">
          Runs once for every failed run (Error or In doubt) of these flows, with the flow, the run, the failed step, its
          error and the run's input. A failed run of an error flow starts no error flow.
        </span>
      </div>
    </NodeCard>
  );
}

export default memo(FlowFailedNodeView);
