import type { KindDefinition } from '../../kinds';
import type { ScheduleValue } from '../../model/types';

export interface SchedulerData {
  /** Sent as the trigger's left_config. */
  selectedValue?: ScheduleValue;
}

/** The scheduler trigger: runs the flow on a schedule; its test lists the next runs (no test drawer). */
const scheduler: KindDefinition<'scheduler'> = {
  kind: 'scheduler',
  providers: ['scheduler'],
  legacyProviders: ['schedule'],
  nodeType: 'Scheduler',
  label: { name: 'Scheduler', description: 'Starts the flow on a schedule.' },
  fixedEvent: { id: 'schedule', name: 'Schedule' },
  triggerOnly: true,
  testDrawer: false,
  initialData: () => ({ selectedValue: { schedule_type: 'AtRegularIntervals', every: 5, time_span: 'Minutes' } }),
  // The Scheduler sends its selectedValue as left_config (no local data).
  triggerConfig: (data) => ({ ...(data.selectedValue as ScheduleValue) }),
};

export default scheduler;

declare module '../../model/types' {
  interface NodeKindMap {
    Scheduler: true;
  }
  interface KindDataMap {
    scheduler: SchedulerData;
  }
}
