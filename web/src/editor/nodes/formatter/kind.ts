import type { KindDefinition } from '../../kinds';
import { addonSummary } from '../addonSummary';
import { operationLabel } from './operations';

/** The formatter add-on: one operation on text, numbers or dates (selectedAddonsValue.operation). */
const formatter: KindDefinition = {
  kind: 'formatter',
  providers: ['formatter'],
  nodeType: 'Formatter',
  label: { name: 'Formatter', description: 'Formats text, numbers and dates.' },
  fixedEvent: { id: 'format', name: 'Format Data' },
  summary: addonSummary('operation', operationLabel),
};

export default formatter;

declare module '../../model/types' {
  interface NodeKindMap {
    Formatter: true;
  }
}
