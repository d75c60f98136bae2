/** The Call a Flow card: the flow picker, the called flow's inputs as mapped fields, the mode and its timeout (its definition is kind.tsx). */
import type { NodeProps } from '@xyflow/react';
import { Input, Select } from 'antd';
import { memo } from 'react';
import { $api } from '../../../api/typed';
import { RefInput } from '../../components/RefInput';
import { useEditor } from '../../EditorContext';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { CALL_MODES, ON_TIMEOUT, TIMEOUT_UNITS, callValues } from './kind';

function CallFlowNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const konnectId = useEditor((s) => s.konnectId);
  const flows = $api.useQuery('get', '/api/v1/konnects/callable');
  const values = callValues(data);
  const set = (patch: Record<string, unknown>, key?: string) =>
    update((d) => ({ selectedAddonsValue: { ...d.selectedAddonsValue, ...patch } }), key);
  const listed = (flows.data?.flows ?? []).filter((f) => f.id !== konnectId);
  const chosen = listed.find((f) => f.id === values.flow);
  const inputs = values.inputs ?? {};
  const mode = values.mode ?? 'wait';
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">
          Flow to call<span className="kz-required">*</span>
        </span>
        <Select
          className="nodrag"
          showSearch
          optionFilterProp="label"
          loading={flows.isPending}
          placeholder="One of your published flows that starts with 'Called by a flow or AI tool'"
          value={values.flow}
          onChange={(flow: number) => set({ flow, inputs: {} })}
          options={listed.map((f) => ({ value: f.id, label: f.name, 'data-testid': `call-flow-option-${f.id}` }))}
          notFoundContent={flows.isPending ? 'Loading…' : "No published flow starts with 'Called by a flow or AI tool'"}
          data-testid={`call-flow-flow-${id}`}
        />
        {chosen?.description && <span className="kz-field-hint">{chosen.description}</span>}
        {values.flow !== undefined && !flows.isPending && !chosen && (
          <span className="kz-field-hint kz-error" data-testid={`call-flow-missing-${id}`}>
            Flow {values.flow} is no longer published with the 'Called by a flow or AI tool' trigger: publishing this flow is refused.
          </span>
        )}
      </div>
      {(chosen?.inputs ?? []).map((field) => {
        const key = String(field.key ?? '');
        return (
          <div className="kz-field" key={key}>
            <span className="kz-field-label">
              {String(field.label || key)}
              {Boolean(field.required) && <span className="kz-required">*</span>}
            </span>
            <RefInput
              nodeId={id}
              value={inputs[key] ?? ''}
              onChange={(v: string) => set({ inputs: { ...inputs, [key]: v } }, `input-${key}`)}
              placeholder="Type @ to use data of earlier steps"
              testId={`call-flow-input-${id}-${key}`}
            />
          </div>
        );
      })}
      <div className="kz-field">
        <span className="kz-field-label">Then</span>
        <Select
          className="nodrag"
          value={mode}
          onChange={(v: string) => set({ mode: v })}
          options={CALL_MODES.map((m) => ({ value: m.value, label: m.label }))}
          data-testid={`call-flow-mode-${id}`}
        />
        <span className="kz-field-hint">
          {mode === 'wait'
            ? 'The run waits, holding nothing, until the called run ends: its Respond body (or its last step’s output) is {{result}}; if it fails, this step fails.'
            : 'The called run starts and this run goes on: the output is the called run’s id.'}
        </span>
      </div>
      {mode === 'wait' && (
        <div className="kz-field">
          <span className="kz-field-label">Timeout</span>
          <Input.Group compact>
            <Input
              className="nodrag"
              style={{ width: '35%' }}
              value={String(values.timeout ?? 1)}
              onChange={(e) => set({ timeout: e.target.value }, 'timeout')}
              data-testid={`call-flow-timeout-${id}`}
            />
            <Select
              className="nodrag"
              style={{ width: '65%' }}
              value={values.timeout_unit ?? 'hours'}
              onChange={(v: string) => set({ timeout_unit: v })}
              options={TIMEOUT_UNITS.map((u) => ({ value: u, label: u }))}
              data-testid={`call-flow-unit-${id}`}
            />
          </Input.Group>
          <Select
            className="nodrag"
            value={values.on_timeout ?? 'fail'}
            onChange={(v: string) => set({ on_timeout: v })}
            options={ON_TIMEOUT.map((o) => ({ value: o.value, label: o.label }))}
            data-testid={`call-flow-on-timeout-${id}`}
          />
        </div>
      )}
    </NodeCard>
  );
}

export default memo(CallFlowNodeView);
