/** The API Call's card (its definition is kind.tsx). */
export { ApiNode as default } from './ApiNode';
