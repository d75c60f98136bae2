/** The formatter card (its definition is kind.ts). */
export { FormatterNode as default } from './FormatterNode';
