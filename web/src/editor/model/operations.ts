/**
 * Edits of the canvas are typed operations applied by the pure `applyOperation`.
 * It never mutates its input and returns the same object when an operation does
 * not apply, so callers can tell a no-op apart (and skip recording history).
 */
import type { App } from '../../api/models';
import { addRefusal, kindForApp } from '../nodes/registry';
import type { Flow, FlowLink, FlowNode, FlowNodeData } from './types';

export const CARD_WIDTH = 450;
export const ACTION_OFFSET = 150;
export const TRIGGER_POSITION = { x: 80, y: 120 };

export type Operation =
  | { type: 'addTrigger'; app: App }
  | { type: 'addAction'; app: App }
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

function chainLink(source: string, target: string): FlowLink {
  return { id: linkId(source, target), source, target, sourceHandle: null, targetHandle: null };
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
      const id = nextNodeId(flow.apps);
      const position = { x: prev.position.x + CARD_WIDTH + ACTION_OFFSET, y: prev.position.y };
      const node = buildNode(op.app, id, prev.data.app_detail.app_index + 1, position);
      return { apps: [...flow.apps, node], links: [...flow.links, chainLink(prev.id, id)] };
    }
    case 'removeNode': {
      const node = flow.apps.find((n) => n.id === op.id);
      if (!node) return flow;
      if (isTriggerNode(node) && flow.apps.length > 1) return flow;
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
        flow.links.filter((l) => l.target === op.id && l.sourceHandle !== null).map((l) => l.source),
      );
      const touched = new Set([op.id, ...providers]);
      return {
        apps: flow.apps.map((n) => (touched.has(n.id) ? { ...n, data: draftData(n.data, op.full && n.id === op.id) } : n)),
        links: flow.links.filter(
          (l) => !(l.sourceHandle !== null || l.targetHandle !== null) || !(touched.has(l.source) || touched.has(l.target)),
        ),
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
    case 'load':
      return { apps: op.flow.apps, links: op.flow.links };
  }
}

/** Why a link cannot be drawn (the same app as source and target), or null. */
export function linkRefusal(flow: Flow, source: string, target: string): string | null {
  if (source === target || flow.links.some((l) => l.source === target && l.target === source)) {
    return 'The same app cannot serve as both the source and the target for a particular app.';
  }
  return null;
}

/** Nodes that come before `nodeId` in the flow (lower app_index), trigger first. */
export function upstreamNodes(apps: FlowNode[], nodeId: string): FlowNode[] {
  const node = apps.find((n) => n.id === nodeId);
  if (!node) return [];
  const index = node.data.app_detail.app_index;
  return apps
    .filter((n) => n.data.app_detail.app_index < index)
    .sort((a, b) => a.data.app_detail.app_index - b.data.app_detail.app_index);
}
