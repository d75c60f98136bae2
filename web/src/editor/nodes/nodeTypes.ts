/** The React Flow node types, built from the kind registry (one folder per kind under nodes/). */
export { nodeTypes } from './registry';
