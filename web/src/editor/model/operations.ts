/**
 * Edits of the canvas are typed operations applied by the pure `applyOperation`.
 * It never mutates its input and returns the same object when an operation does
 * not apply, so callers can tell a no-op apart (and skip recording history).
 */
import type { App } from '../../api/models';
import { addRefusal, kindForApp } from '../nodes/registry';
import {
  STEP_GAP,
  PATH_ROW,
  MAX_PATHS,
  ancestors,
  descendants,
  hasPaths,
  isJoin,
  isRouter,
  joinOf,
  nextLink,
  nextPathId,
  nextPathName,
  pathEnd,
  pathLink,
  pathNodes,
  pathOf,
  renumber,
  routerOfJoin,
  routerPaths,
  type RouterPath,
} from './paths';
import type { Flow, FlowLink, FlowNode, FlowNodeData } from './types';

export const CARD_WIDTH = 450;
export const ACTION_OFFSET = 150;
export const TRIGGER_POSITION = { x: 80, y: 120 };

export type Operation =
  | { type: 'addTrigger'; app: App }
  /** A step after the last node, or after `after` (a router's path when `handle` is its path id: at the path's end). */
  | { type: 'addAction'; app: App; after?: string; handle?: string | null }
  /** A join linked from the end of each of the router's paths (docs/paths.md). */
  | { type: 'joinPaths'; router: string; app: App }
  | { type: 'addPath'; router: string }
  /** A router's path and the steps on it. */
  | { type: 'removePath'; router: string; path: string }
  | { type: 'removeNode'; id: string }
  | { type: 'moveNode'; id: string; position: { x: number; y: number } }
  | { type: 'updateNodeData'; id: string; patch: Partial<FlowNodeData> }
  | { type: 'resetNode'; id: string; full: boolean }
  | { type: 'addLink'; source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }
  | { type: 'removeLink'; id: string }
  | { type: 'load'; flow: Flow };

export function isTriggerNode(node: FlowNode): boolean {
  return node.data.app_detail.app_index === 1;
}

/** Which node type renders an app: its kind's (one folder per kind under nodes/, see nodes/registry.ts). */
export { nodeKindFor } from '../nodes/registry';

/** The API Call's default request (defined with its kind, nodes/api/kind.tsx). */
export { defaultApiValue } from '../nodes/api/kind';

/** Next free `node-N` id. */
export function nextNodeId(apps: FlowNode[]): string {
  const max = apps.reduce((acc, n) => {
    const m = /^node-(\d+)$/.exec(n.id);
    return m ? Math.max(acc, Number(m[1])) : acc;
  }, 0);
  return `node-${max + 1}`;
}

export function linkId(source: string, target: string): string {
  return `link-${source}-${target}`;
}

function chainLink(source: string, target: string, sourceHandle: string | null = null): FlowLink {
  const id = sourceHandle ? `${linkId(source, target)}-${sourceHandle}-` : linkId(source, target);
  return { id, source, target, sourceHandle, targetHandle: null };
}

/** A mapping link (a field mapped from another node, with handles), not a step of the chain or a router's path. */
function isMappingLink(flow: Flow, l: FlowLink): boolean {
  if (l.sourceHandle === null && l.targetHandle === null) return false;
  return !isRouter(flow.apps.find((n) => n.id === l.source));
}

/** Why this app cannot be added there (a router or join on a path, a delay or iterator on a path), or null. */
export function insertRefusal(flow: Flow, app: App, after?: string, handle?: string | null): string | null {
  const anchor = after === undefined ? lastNode(flow.apps) : flow.apps.find((n) => n.id === after);
  if (!anchor) return null;
  const onPath = (isRouter(anchor) && Boolean(handle ?? (after === undefined ? true : null))) || Boolean(pathOf(flow, anchor.id));
  if (!onPath) return null;
  const kind = kindForApp(app.provider, false);
  if (kind.nodeType === 'router' || kind.nodeType === 'join') return 'A path cannot hold a router or a join (one level of paths); use the Join paths button.';
  if (kind.kind === 'delay' || kind.kind === 'iterator') return `A ${kind.label.name.toLowerCase()} cannot be on a path; add it before the router or after the join.`;
  return null;
}

/** Shifts these nodes right by one step. */
function shiftRight(apps: FlowNode[], ids: Set<string>): FlowNode[] {
  return apps.map((n) => (ids.has(n.id) ? { ...n, position: { x: n.position.x + STEP_GAP, y: n.position.y } } : n));
}

/** A node inserted after `source` (on the router's path `handle`): the link that left there now leaves the new node. */
function insertAfter(flow: Flow, app: App, anchorId: string, handle: string | null): Flow {
  const anchor = flow.apps.find((n) => n.id === anchorId);
  if (!anchor) return flow;
  let source = anchor;
  let sourceHandle: string | null = null;
  let y = anchor.position.y;
  if (isRouter(anchor)) {
    const paths = routerPaths(anchor);
    const index = paths.findIndex((p) => p.id === handle);
    if (index < 0) return flow;
    const end = pathEnd(flow, anchor.id, paths[index].id);
    source = flow.apps.find((n) => n.id === end.source) ?? anchor;
    sourceHandle = end.handle;
    y = anchor.position.y + index * PATH_ROW;
  }
  if (insertRefusal(flow, app, anchorId, handle)) return flow;
  const out = sourceHandle ? pathLink(flow, source.id, sourceHandle) : nextLink(flow, source.id);
  const id = nextNodeId(flow.apps);
  const node = buildNode(app, id, source.data.app_detail.app_index + 1, { x: source.position.x + STEP_GAP, y });
  let apps = [...flow.apps, node];
  const links = flow.links.filter((l) => l !== out);
  links.push(chainLink(source.id, id, sourceHandle));
  if (out) {
    // The rest moves one step right; a new router leads to it by its first path.
    apps = shiftRight(apps, new Set([out.target, ...descendants(flow, out.target)]));
    links.push(chainLink(id, out.target, isRouter(node) ? (routerPaths(node)[0]?.id ?? null) : null));
  }
  return renumber({ apps, links }, true);
}

/** The node a new action is chained after: the highest app_index. */
export function lastNode(apps: FlowNode[]): FlowNode | undefined {
  return apps.reduce<FlowNode | undefined>(
    (acc, n) => (!acc || n.data.app_detail.app_index > acc.data.app_detail.app_index ? n : acc),
    undefined,
  );
}

export function buildNode(app: App, id: string, appIndex: number, position: { x: number; y: number }): FlowNode {
  const trigger = appIndex === 1;
  const kind = kindForApp(app.provider, trigger);
  const type = kind.nodeType;
  const data: FlowNodeData = {
    node_id: id,
    app_detail: {
      id: app.id,
      name: app.name,
      app_type: app.app_type,
      provider: app.provider,
      app_index: appIndex,
      image_url: app.image_url,
      auth_type: app.auth_type,
      side: trigger ? 'left' : 'right',
      ...kind.appDetail,
    },
    // Built-in events: add-ons with one fixed event start with it chosen.
    selectedEvent: kind.fixedEvent ? { ...kind.fixedEvent } : null,
    selectedAccount: null,
    // Never tested: a static Draft state ("Not tested"); Loading only while a test is in flight.
    app_status: { type: 'Draft', collapseEventAccount: false, collapseConfiguration: false },
    configResponses: [],
    response_payload: null,
    ...kind.initialData?.(),
  };
  return { id, type, position, data };
}

function mapNode(flow: Flow, id: string, fn: (n: FlowNode) => FlowNode): Flow {
  let changed = false;
  const apps = flow.apps.map((n) => {
    if (n.id !== id) return n;
    const next = fn(n);
    if (next !== n) changed = true;
    return next;
  });
  return changed ? { ...flow, apps } : flow;
}

/** Back to Draft: no test result, no outputs (a full reset also forgets event, account and fields). */
export function draftData(data: FlowNodeData, full: boolean): FlowNodeData {
  return {
    ...data,
    app_status: { ...data.app_status, type: 'Draft', errorMessage: undefined },
    response_payload: null,
    configResponses: full ? [] : (data.configResponses ?? []).filter((f) => !f.additional),
    ...(full && data.app_detail.app_type === 'api' ? { selectedEvent: null, selectedAccount: null } : {}),
  };
}

export function applyOperation(flow: Flow, op: Operation): Flow {
  switch (op.type) {
    case 'addTrigger': {
      if (flow.apps.some(isTriggerNode)) return flow;
      const id = nextNodeId(flow.apps);
      return { apps: [...flow.apps, buildNode(op.app, id, 1, { ...TRIGGER_POSITION })], links: flow.links };
    }
    case 'addAction': {
      const prev = lastNode(flow.apps);
      if (!prev) return flow;
      if (addRefusal(flow.apps, op.app.provider)) return flow;
      if (op.after !== undefined) return insertAfter(flow, op.app, op.after, op.handle ?? null);
      if (isRouter(prev)) {
        // After a router: at the start of its first path that has no step.
        const free = routerPaths(prev).find((p) => !pathLink(flow, prev.id, p.id));
        return free ? insertAfter(flow, op.app, prev.id, free.id) : flow;
      }
      if (hasPaths(flow)) return insertAfter(flow, op.app, prev.id, null);
      const id = nextNodeId(flow.apps);
      const position = { x: prev.position.x + CARD_WIDTH + ACTION_OFFSET, y: prev.position.y };
      const node = buildNode(op.app, id, prev.data.app_detail.app_index + 1, position);
      return { apps: [...flow.apps, node], links: [...flow.links, chainLink(prev.id, id)] };
    }
    case 'removeNode': {
      const node = flow.apps.find((n) => n.id === op.id);
      if (!node) return flow;
      if (isTriggerNode(node) && flow.apps.length > 1) return flow;
      if (hasPaths(flow)) return removeOnPaths(flow, node);
      const index = node.data.app_detail.app_index;
      // The chain closes over the gap: the node before now leads to the node after.
      const before = flow.links.find((l) => l.target === op.id && l.sourceHandle === null)?.source;
      const after = flow.links.find((l) => l.source === op.id && l.targetHandle === null)?.target;
      const links = flow.links.filter((l) => l.source !== op.id && l.target !== op.id);
      if (before && after && !links.some((l) => l.source === before && l.target === after)) links.push(chainLink(before, after));
      const apps = flow.apps
        .filter((n) => n.id !== op.id)
        .map((n) =>
          n.data.app_detail.app_index > index
            ? { ...n, data: { ...n.data, app_detail: { ...n.data.app_detail, app_index: n.data.app_detail.app_index - 1 } } }
            : n,
        );
      return { apps, links };
    }
    case 'moveNode':
      return mapNode(flow, op.id, (n) =>
        n.position.x === op.position.x && n.position.y === op.position.y ? n : { ...n, position: { ...op.position } },
      );
    case 'updateNodeData':
      return mapNode(flow, op.id, (n) => ({ ...n, data: { ...n.data, ...op.patch, node_id: n.data.node_id } }));
    case 'resetNode': {
      const node = flow.apps.find((n) => n.id === op.id);
      if (!node) return flow;
      // The node and the upstream providers mapped into it go back to Draft; their mapping links go.
      const providers = new Set(
        flow.links.filter((l) => l.target === op.id && isMappingLink(flow, l)).map((l) => l.source),
      );
      const touched = new Set([op.id, ...providers]);
      return {
        apps: flow.apps.map((n) => (touched.has(n.id) ? { ...n, data: draftData(n.data, op.full && n.id === op.id) } : n)),
        links: flow.links.filter((l) => !isMappingLink(flow, l) || !(touched.has(l.source) || touched.has(l.target))),
      };
    }
    case 'addLink': {
      if (op.source === op.target) return flow;
      const ids = new Set(flow.apps.map((n) => n.id));
      if (!ids.has(op.source) || !ids.has(op.target)) return flow;
      if (flow.links.some((l) => l.source === op.target && l.target === op.source)) return flow;
      const sourceHandle = op.sourceHandle ?? null;
      const targetHandle = op.targetHandle ?? null;
      if (flow.links.some((l) => l.source === op.source && l.target === op.target && l.sourceHandle === sourceHandle && l.targetHandle === targetHandle))
        return flow;
      const base = linkId(op.source, op.target);
      const id = sourceHandle || targetHandle ? `${base}-${sourceHandle ?? ''}-${targetHandle ?? ''}` : base;
      return { apps: flow.apps, links: [...flow.links, { id, source: op.source, target: op.target, sourceHandle, targetHandle }] };
    }
    case 'removeLink': {
      if (!flow.links.some((l) => l.id === op.id)) return flow;
      return { apps: flow.apps, links: flow.links.filter((l) => l.id !== op.id) };
    }
    case 'joinPaths': {
      const router = flow.apps.find((n) => n.id === op.router);
      if (!router || !isRouter(router) || joinOf(flow, router.id)) return flow;
      if (kindForApp(op.app.provider, false).nodeType !== 'join') return flow;
      const paths = routerPaths(router);
      const xs = [router.position.x, ...paths.flatMap((p) => pathNodes(flow, router.id, p.id).map((n) => n.position.x))];
      const id = nextNodeId(flow.apps);
      const join = buildNode(op.app, id, router.data.app_detail.app_index + 1, { x: Math.max(...xs) + STEP_GAP, y: router.position.y });
      const links = [...flow.links];
      for (const p of paths) {
        const end = pathEnd(flow, router.id, p.id);
        links.push(chainLink(end.source, id, end.handle));
      }
      return renumber({ apps: [...flow.apps, join], links }, true);
    }
    case 'addPath': {
      const router = flow.apps.find((n) => n.id === op.router);
      const paths = routerPaths(router);
      if (!router || !isRouter(router) || paths.length >= MAX_PATHS) return flow;
      const path: RouterPath = { id: nextPathId(paths), name: nextPathName(paths), otherwise: false, conditions: [] };
      const join = joinOf(flow, router.id);
      const apps = flow.apps.map((n) => (n.id === router.id ? { ...n, data: { ...n.data, routerPaths: [...paths, path] } } : n));
      // An empty path goes straight to the join.
      const links = join ? [...flow.links, chainLink(router.id, join.id, path.id)] : flow.links;
      return { apps, links };
    }
    case 'removePath': {
      const router = flow.apps.find((n) => n.id === op.router);
      const paths = routerPaths(router);
      if (!router || paths.length <= 1 || !paths.some((p) => p.id === op.path)) return flow;
      const gone = new Set(pathNodes(flow, router.id, op.path).map((n) => n.id));
      const apps = flow.apps
        .filter((n) => !gone.has(n.id))
        .map((n) => (n.id === router.id ? { ...n, data: { ...n.data, routerPaths: paths.filter((p) => p.id !== op.path) } } : n));
      const links = flow.links.filter((l) => !gone.has(l.source) && !gone.has(l.target) && !(l.source === router.id && l.sourceHandle === op.path));
      return renumber({ apps, links }, true);
    }
    case 'load':
      return { apps: op.flow.apps, links: op.flow.links };
  }
}

/**
 * Removing a node of a flow with paths. A step (on a path or not): the node before leads to the
 * node after, on the same path handle. A join: the step after it follows the end of the router's
 * first path. A router: it goes with its paths' steps and its join; the step after the join follows
 * the node before the router (undo brings them back).
 */
function removeOnPaths(flow: Flow, node: FlowNode): Flow {
  const gone = new Set([node.id]);
  let before: FlowLink | undefined;
  let afterId: string | undefined;
  const extra: FlowLink[] = [];
  if (isRouter(node)) {
    const join = joinOf(flow, node.id);
    for (const p of routerPaths(node)) for (const n of pathNodes(flow, node.id, p.id)) gone.add(n.id);
    if (join) gone.add(join.id);
    before = flow.links.find((l) => l.target === node.id && !isMappingLink(flow, l));
    afterId = join ? nextLink(flow, join.id)?.target : undefined;
  } else if (isJoin(node)) {
    const router = routerOfJoin(flow, node.id);
    const next = nextLink(flow, node.id)?.target;
    const first = router ? routerPaths(router)[0] : undefined;
    if (router && first && next) {
      const rest = { ...flow, links: flow.links.filter((l) => l.target !== node.id && l.source !== node.id) };
      const end = pathEnd(rest, router.id, first.id);
      extra.push(chainLink(end.source, next, end.handle));
    }
  } else {
    before = flow.links.find((l) => l.target === node.id && !isMappingLink(flow, l));
    afterId = nextLink(flow, node.id)?.target;
  }
  const links = flow.links.filter((l) => !gone.has(l.source) && !gone.has(l.target));
  if (before && afterId && !gone.has(before.source) && !links.some((l) => l.source === before.source && l.target === afterId && l.sourceHandle === before.sourceHandle))
    links.push(chainLink(before.source, afterId, before.sourceHandle));
  links.push(...extra);
  return renumber({ apps: flow.apps.filter((n) => !gone.has(n.id)), links }, true);
}

/** Nodes that come before `nodeId` along the links of a flow with paths (ancestors), in run order. */
export function upstreamAlongLinks(flow: Flow, nodeId: string): FlowNode[] {
  const found = ancestors(flow, nodeId);
  return flow.apps.filter((n) => found.has(n.id)).sort((a, b) => a.data.app_detail.app_index - b.data.app_detail.app_index);
}

/** Why a link cannot be drawn (the same app as source and target), or null. */
export function linkRefusal(flow: Flow, source: string, target: string): string | null {
  if (source === target || flow.links.some((l) => l.source === target && l.target === source)) {
    return 'The same app cannot serve as both the source and the target for a particular app.';
  }
  return null;
}

/**
 * Nodes that come before `nodeId` in the flow (lower app_index), trigger first. In a flow with
 * paths (given its links), only what is upstream along the links: a step on a path sees the steps
 * before the router and the earlier steps of its own path; a step after the join sees every path.
 */
export function upstreamNodes(apps: FlowNode[], nodeId: string, links?: FlowLink[]): FlowNode[] {
  const node = apps.find((n) => n.id === nodeId);
  if (!node) return [];
  if (links && hasPaths({ apps, links })) return upstreamAlongLinks({ apps, links }, nodeId);
  const index = node.data.app_detail.app_index;
  return apps
    .filter((n) => n.data.app_detail.app_index < index)
    .sort((a, b) => a.data.app_detail.app_index - b.data.app_detail.app_index);
}
