import { ForkOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import { MAX_PATHS, pathNameRefusal, type RouterMode, type RouterPath } from '../../model/paths';
import { VALUELESS_OPERATORS } from '../../model/rules';

export interface RouterData {
  /** parallel: every path whose conditions pass runs; first_match: only the first such path. */
  routerMode?: RouterMode;
  /** 1..10 paths; the link out of the router for a path carries sourceHandle = the path's id. */
  routerPaths?: RouterPath[];
}

export const MODE_LABELS: Record<RouterMode, string> = {
  parallel: 'Run every matching path',
  first_match: 'Only the first matching path',
};

const blank = (id: string) => ({ id, field: '', operator: '', valueOfFilter: '', joinWith: '' as const });

/** Why a router cannot be tested or published as it is (a path without a complete condition...), or null. */
export function routerProblem(data: RouterData): string | null {
  const paths = data.routerPaths ?? [];
  if (paths.length === 0) return 'A router needs at least one path.';
  if (paths.length > MAX_PATHS) return `A router has at most ${MAX_PATHS} paths.`;
  if (paths.filter((p) => p.otherwise).length > 1) return 'Only one path can be the Otherwise path.';
  for (const p of paths) {
    const refusal = pathNameRefusal(paths, p.id, p.name);
    if (refusal) return `${p.name || 'A path'}: ${refusal}`;
    if (p.otherwise) continue;
    if (p.conditions.length === 0) return `Path ${p.name}: add a condition or make it the Otherwise path.`;
    const incomplete = p.conditions.some((c) => !c.field.trim() || !c.operator || (!VALUELESS_OPERATORS.has(c.operator) && c.valueOfFilter === ''));
    if (incomplete) return `Path ${p.name}: fill each condition (field, operator and value).`;
  }
  return null;
}

/** The router add-on: splits the flow into paths, each run when its conditions pass (docs/editor.md). */
const router: KindDefinition<'router'> = {
  kind: 'router',
  providers: ['router'],
  nodeType: 'router',
  label: { name: 'Router', description: 'Splits the flow into paths, each with its own conditions.', icon: <ForkOutlined /> },
  fixedEvent: { id: 'route', name: 'Split Into Paths' },
  timer: false,
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({
    routerMode: 'parallel',
    routerPaths: [
      { id: 'path-1', name: 'Path 1', otherwise: false, conditions: [blank('c1')] },
      { id: 'path-2', name: 'Path 2', otherwise: true, conditions: [] },
    ],
  }),
  testBlocker: (data) => routerProblem(data),
  summary: (data) => MODE_LABELS[data.routerMode ?? 'parallel'],
};

export default router;

declare module '../../model/types' {
  interface NodeKindMap {
    router: true;
  }
  interface KindDataMap {
    router: RouterData;
  }
}
