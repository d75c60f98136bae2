import type { KindDefinition } from '../../kinds';

export interface SplitterData {
  /** The kept segment: an index of SPLITTER_SEGMENTS (First by default). */
  inHouseAppConfig?: { segmentIndex?: number };
}

/** The splitter add-on: splits a text and keeps one segment. */
const splitter: KindDefinition<'splitter'> = {
  kind: 'splitter',
  providers: ['splitter'],
  nodeType: 'InHouse',
  label: { name: 'Splitter', description: 'Splits a text and keeps a segment.' },
  fixedEvent: { id: 'split', name: 'Split Text' },
  initialData: () => ({ inHouseAppConfig: { segmentIndex: 0 } }),
};

export default splitter;

declare module '../../model/types' {
  interface NodeKindMap {
    InHouse: true;
  }
  interface KindDataMap {
    splitter: SplitterData;
  }
}
