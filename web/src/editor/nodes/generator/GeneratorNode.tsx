import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { AddonSelect, AddonText } from '../card/AddonFields';
import { NodeCard } from '../card/NodeCard';
import { GENERATOR_KINDS, GENERATOR_LABELS, GENERATOR_OPTION_LABELS } from './labels';

/** Generator: UUIDs, random numbers and strings, dates, lists and sequences. */
function GeneratorNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const what = String(data.selectedAddonsValue?.what ?? '');
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AddonSelect id={id} data={data} name="what" label="Generate" options={Object.keys(GENERATOR_KINDS).map((k) => ({ value: k, label: GENERATOR_LABELS[k] ?? k, hint: k }))} />
      {(GENERATOR_KINDS[what] ?? []).map((opt) => (
        <AddonText key={opt} id={id} data={data} name={opt} label={GENERATOR_OPTION_LABELS[opt] ?? opt} refs={false} />
      ))}
    </NodeCard>
  );
}

export const GeneratorNode = memo(GeneratorNodeView);
