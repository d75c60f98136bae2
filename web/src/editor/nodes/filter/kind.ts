import type { KindDefinition } from '../../kinds';
import type { FilterCondition } from '../../model/types';

export interface FilterData {
  filterValues?: FilterCondition[];
}

/** The filter add-on (provider conditioner; the api also accepts filter): the flow goes on only when its conditions hold. */
const filter: KindDefinition<'conditioner'> = {
  kind: 'filter',
  providers: ['conditioner', 'filter'],
  nodeType: 'Filter',
  label: { name: 'Filter', description: 'Continues only when its conditions hold.' },
  fixedEvent: { id: 'filter', name: 'Filter' },
  optionsFetch: false,
  initialData: () => ({ filterValues: [{ id: 'c1', field: '', operator: '', valueOfFilter: '', joinWith: '' }] }),
};

export default filter;

declare module '../../model/types' {
  interface NodeKindMap {
    Filter: true;
  }
  interface KindDataMap {
    conditioner: FilterData;
  }
}
