import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { AddonSelect, AddonText } from '../card/AddonFields';
import { NodeCard } from '../card/NodeCard';

export const GENERATOR_KINDS: Record<string, string[]> = {
  uuid4: [],
  uuid7: [],
  nanoid: ['length'],
  random_number: ['min', 'max', 'decimal_places'],
  random_string: ['length', 'charset'],
  date: ['amount', 'unit', 'to_format', 'timezone'],
  list: ['count', 'item'],
  sequence: ['count', 'start', 'step'],
};

/** Generator: UUIDs, random numbers and strings, dates, lists and sequences. */
function GeneratorNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const what = String(data.selectedAddonsValue?.what ?? '');
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AddonSelect id={id} data={data} name="what" label="Generate" options={Object.keys(GENERATOR_KINDS).map((k) => ({ value: k, label: k }))} />
      {(GENERATOR_KINDS[what] ?? []).map((opt) => (
        <AddonText key={opt} id={id} data={data} name={opt} label={opt.replace('_', ' ')} refs={false} />
      ))}
    </NodeCard>
  );
}

export const GeneratorNode = memo(GeneratorNodeView);
