/** The filter card (its definition is kind.ts). */
export { FilterNode as default } from './FilterNode';
