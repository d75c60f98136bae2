/**
 * Paths that join (docs/paths.md): the graph of a flow with a router. A router node has several
 * paths (`data.routerPaths`); the link out of it for a path carries `sourceHandle: <path id>` and
 * leads to the first step of that path (or straight to the join for an empty path). A path's steps
 * follow one another by plain links (no handle) up to the join (its incoming links come from the
 * last node of each path) or to their end. This module is pure and imports types only, so kind
 * definitions may use it.
 */
import type { components } from '../../api/schema';
import type { Flow, FlowLink, FlowNode, FilterCondition, Narrow } from './types';

export const ROUTER_TYPE = 'router';
export const JOIN_TYPE = 'join';
/** The vertical distance between two paths' rows on the canvas. */
export const PATH_ROW = 960;
/** The horizontal distance between two steps (the card's width and a gap, as a chain). */
export const STEP_GAP = 600;
export const MAX_PATHS = 10;
export const PATH_NAME_MAX = 40;

/** One path of a router (`data.routerPaths`): the api's CanvasPath. */
export type RouterPath = Narrow<
  components['schemas']['CanvasPath'],
  { id: string; name: string; otherwise: boolean; conditions: FilterCondition[] }
>;

export type RouterMode = 'parallel' | 'first_match';
export type JoinWait = 'all' | 'any';

export const isRouter = (n: FlowNode | undefined): boolean => n?.type === ROUTER_TYPE;
export const isJoin = (n: FlowNode | undefined): boolean => n?.type === JOIN_TYPE;

/** The paths of a router node (none for any other node). */
export function routerPaths(node: FlowNode | undefined): RouterPath[] {
  if (!node || !isRouter(node)) return [];
  const paths = (node.data as { routerPaths?: RouterPath[] }).routerPaths;
  return Array.isArray(paths) ? paths : [];
}

/** Whether a flow uses paths (its order and ancestry then follow the links). */
export function hasPaths(flow: Flow): boolean {
  return flow.apps.some((n) => isRouter(n) || isJoin(n));
}

const byId = (flow: Flow) => new Map(flow.apps.map((n) => [n.id, n] as const));

/** The link a router's path starts with (router -> first step, or -> join). */
export function pathLink(flow: Flow, routerId: string, pathId: string): FlowLink | undefined {
  return flow.links.find((l) => l.source === routerId && l.sourceHandle === pathId);
}

/** The plain (no handle) link out of a node: the next step of a chain. */
export function nextLink(flow: Flow, nodeId: string): FlowLink | undefined {
  return flow.links.find((l) => l.source === nodeId && l.sourceHandle === null);
}

/** The steps on one path of a router, in order (the join not included). */
export function pathNodes(flow: Flow, routerId: string, pathId: string): FlowNode[] {
  const nodes = byId(flow);
  const out: FlowNode[] = [];
  const seen = new Set<string>([routerId]);
  let id = pathLink(flow, routerId, pathId)?.target;
  while (id && !seen.has(id)) {
    const node = nodes.get(id);
    if (!node || isJoin(node) || isRouter(node)) break;
    seen.add(id);
    out.push(node);
    id = nextLink(flow, id)?.target;
  }
  return out;
}

/** The join a router's paths meet at, if any. */
export function joinOf(flow: Flow, routerId: string): FlowNode | undefined {
  const nodes = byId(flow);
  for (const path of routerPaths(nodes.get(routerId))) {
    const steps = pathNodes(flow, routerId, path.id);
    const last = steps[steps.length - 1];
    const link = last ? nextLink(flow, last.id) : pathLink(flow, routerId, path.id);
    const target = link ? nodes.get(link.target) : undefined;
    if (isJoin(target)) return target;
  }
  return undefined;
}

/** Where a step added at the end of a path is linked from: the path's last step, or the router's handle. */
export function pathEnd(flow: Flow, routerId: string, pathId: string): { source: string; handle: string | null } {
  const steps = pathNodes(flow, routerId, pathId);
  const last = steps[steps.length - 1];
  return last ? { source: last.id, handle: null } : { source: routerId, handle: pathId };
}

/** The router a join belongs to: the router whose path ends lead to it. */
export function routerOfJoin(flow: Flow, joinId: string): FlowNode | undefined {
  return flow.apps.find((n) => isRouter(n) && joinOf(flow, n.id)?.id === joinId);
}

/** The router and path a step is on, if it is on one. */
export function pathOf(flow: Flow, nodeId: string): { router: FlowNode; path: RouterPath; index: number } | undefined {
  for (const router of flow.apps.filter(isRouter)) {
    const paths = routerPaths(router);
    for (let i = 0; i < paths.length; i += 1) {
      if (pathNodes(flow, router.id, paths[i].id).some((n) => n.id === nodeId)) return { router, path: paths[i], index: i };
    }
  }
  return undefined;
}

/**
 * The nodes in run order (the flow spec's): trigger, ..., router, the steps of path 1, of path 2,
 * ..., the join, the steps after it. Nodes no link reaches follow in their previous order.
 */
export function runOrder(flow: Flow): FlowNode[] {
  const nodes = byId(flow);
  const sorted = [...flow.apps].sort((a, b) => a.data.app_detail.app_index - b.data.app_detail.app_index);
  const out: FlowNode[] = [];
  const seen = new Set<string>();
  const push = (n: FlowNode) => {
    seen.add(n.id);
    out.push(n);
  };
  let current: FlowNode | undefined = sorted[0];
  while (current && !seen.has(current.id)) {
    push(current);
    if (isRouter(current)) {
      for (const path of routerPaths(current)) for (const step of pathNodes(flow, current.id, path.id)) if (!seen.has(step.id)) push(step);
      current = joinOf(flow, current.id);
    } else {
      const link = nextLink(flow, current.id);
      current = link ? nodes.get(link.target) : undefined;
    }
  }
  for (const n of sorted) if (!seen.has(n.id)) push(n);
  return out;
}

/** The flow with app_index following the run order (a flow with paths, or `always`); unchanged nodes are kept. */
export function renumber(flow: Flow, always = false): Flow {
  if (!always && !hasPaths(flow)) return flow;
  const order = runOrder(flow);
  const index = new Map(order.map((n, i) => [n.id, i + 1] as const));
  return {
    ...flow,
    apps: flow.apps.map((n) => {
      const want = index.get(n.id) ?? n.data.app_detail.app_index;
      return want === n.data.app_detail.app_index ? n : { ...n, data: { ...n.data, app_detail: { ...n.data.app_detail, app_index: want } } };
    }),
  };
}

/** Every node a link path leads from to `nodeId` (its ancestors), any handle. */
export function ancestors(flow: Flow, nodeId: string): Set<string> {
  const found = new Set<string>();
  const queue = [nodeId];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    for (const l of flow.links) {
      if (l.target === id && !found.has(l.source) && l.source !== nodeId) {
        found.add(l.source);
        queue.push(l.source);
      }
    }
  }
  return found;
}

/** Every node reachable from `nodeId` by links (not itself). */
export function descendants(flow: Flow, nodeId: string): Set<string> {
  const found = new Set<string>();
  const queue = [nodeId];
  while (queue.length > 0) {
    const id = queue.pop() as string;
    for (const l of flow.links) {
      if (l.source === id && !found.has(l.target) && l.target !== nodeId) {
        found.add(l.target);
        queue.push(l.target);
      }
    }
  }
  return found;
}

/** The contracts' NAME_PATTERN (konnectz_contracts.steps.router): no space first or last. */
const NAME_RE = /^[A-Za-z0-9_-](?:[A-Za-z0-9 _-]{0,38}[A-Za-z0-9_-])?$/;

/** Why a path name is refused (empty, too long, other characters, used by another path), or null. */
export function pathNameRefusal(paths: RouterPath[], pathId: string, name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return 'A path needs a name.';
  if (name.length > PATH_NAME_MAX) return `A path name has at most ${PATH_NAME_MAX} characters.`;
  if (!NAME_RE.test(name)) return 'A path name has letters, digits, spaces (not first or last), - and _ only.';
  if (paths.some((p) => p.id !== pathId && p.name.trim().toLowerCase() === trimmed.toLowerCase())) return 'Another path has this name.';
  return null;
}

/** The next free path id (`path-N`). */
export function nextPathId(paths: RouterPath[]): string {
  const max = paths.reduce((acc, p) => {
    const m = /^path-(\d+)$/.exec(p.id);
    return m ? Math.max(acc, Number(m[1])) : acc;
  }, 0);
  return `path-${max + 1}`;
}

/** A free name "Path N" for a new path. */
export function nextPathName(paths: RouterPath[]): string {
  for (let i = paths.length + 1; ; i += 1) {
    const name = `Path ${i}`;
    if (!paths.some((p) => p.name.toLowerCase() === name.toLowerCase())) return name;
  }
}
