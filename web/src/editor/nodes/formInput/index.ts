/** The formInput card (its definition is kind.ts). */
export { FormInputNode as default } from './FormInputNode';
