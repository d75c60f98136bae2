import type { KindDefinition } from '../../kinds';
import { GeneratorNode } from './GeneratorNode';
import { GENERATOR_LABELS } from './labels';

declare module '../../model/types' {
  interface NodeKindMap {
    Generator: true;
  }
}

/** The generator add-on: generates values (selectedAddonsValue.what). */
const generator: KindDefinition = {
  kind: 'generator',
  providers: ['generator'],
  nodeType: 'Generator',
  component: GeneratorNode,
  label: { name: 'Generator', description: 'Generates values.' },
  fixedEvent: { id: 'generate', name: 'Generate Values' },
  summary: (data) => {
    const what = data.selectedAddonsValue?.what;
    return typeof what === 'string' && what ? (GENERATOR_LABELS[what] ?? what) : null;
  },
};

export default generator;
