/** The scheduler card (its definition is kind.ts). */
export { SchedulerNode as default } from './SchedulerNode';
