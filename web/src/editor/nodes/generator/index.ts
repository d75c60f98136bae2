/** The generator card (its definition is kind.ts). */
export { GeneratorNode as default } from './GeneratorNode';
