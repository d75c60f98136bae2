import type { KindDefinition } from '../../kinds';
import { addonSummary } from '../addonSummary';
import { GENERATOR_LABELS } from './labels';

/** The generator add-on: generates values (selectedAddonsValue.what). */
const generator: KindDefinition = {
  kind: 'generator',
  providers: ['generator'],
  nodeType: 'Generator',
  label: { name: 'Generator', description: 'Generates values.' },
  fixedEvent: { id: 'generate', name: 'Generate Values' },
  summary: addonSummary('what', (what) => GENERATOR_LABELS[what] ?? what),
};

export default generator;

declare module '../../model/types' {
  interface NodeKindMap {
    Generator: true;
  }
}
