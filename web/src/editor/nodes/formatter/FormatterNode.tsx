import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { AddonSelect, AddonText } from '../card/AddonFields';
import { NodeCard } from '../card/NodeCard';
import { canonicalOperation, FORMATTER_OPERATIONS, operationOptions, OPTION_LABELS } from './operations';

/** Formatter: one function applied to an input (text, number and date formats). */
function FormatterNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const operation = canonicalOperation(String(data.selectedAddonsValue?.operation ?? ''));
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AddonSelect
        id={id}
        data={data}
        name="operation"
        label="Operation"
        options={operationOptions()}
      />
      <AddonText id={id} data={data} name="input" label="Input" required />
      {(FORMATTER_OPERATIONS[operation] ?? []).map((opt) => (
        <AddonText key={opt} id={id} data={data} name={opt} label={OPTION_LABELS[opt] ?? opt} />
      ))}
    </NodeCard>
  );
}

export const FormatterNode = memo(FormatterNodeView);
