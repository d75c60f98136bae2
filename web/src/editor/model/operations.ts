/**
 * Edits of the canvas are typed operations applied by the pure `applyOperation`.
 * It never mutates its input and returns the same object when an operation does
 * not apply, so callers can tell a no-op apart (and skip recording history).
 */
import type { App } from '../../api/types';
import type { ApiSelectedValue, Flow, FlowLink, FlowNode, FlowNodeData, NodeKind } from './types';

export const CARD_WIDTH = 450;
export const ACTION_OFFSET = 150;
export const TRIGGER_POSITION = { x: 80, y: 120 };

export type Operation =
  | { type: 'addTrigger'; app: App }
  | { type: 'addAction'; app: App }
  | { type: 'removeNode'; id: string }
  | { type: 'moveNode'; id: string; position: { x: number; y: number } }
  | { type: 'updateNodeData'; id: string; patch: Partial<FlowNodeData> }
  | { type: 'addLink'; source: string; target: string }
  | { type: 'removeLink'; id: string }
  | { type: 'load'; flow: Flow };

export function isTriggerNode(node: FlowNode): boolean {
  return node.data.app_detail.app_index === 1;
}

export function nodeKindFor(app: App, trigger: boolean): NodeKind {
  if (app.provider === 'webhook') return 'WebhookInner';
  if (app.provider === 'api') return 'Api';
  return trigger ? 'TriggerNode' : 'ActionNode';
}

export function defaultApiValue(): ApiSelectedValue {
  return {
    wrap_in_array: 'NO',
    payload_type: 'JSON',
    apiDetails: { method: 'POST', endpointURL: '', headers: [], params: [], body: [] },
  };
}

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

/** The node a new action is chained after: the highest app_index. */
export function lastNode(apps: FlowNode[]): FlowNode | undefined {
  return apps.reduce<FlowNode | undefined>(
    (acc, n) => (!acc || n.data.app_detail.app_index > acc.data.app_detail.app_index ? n : acc),
    undefined,
  );
}

export function buildNode(app: App, id: string, appIndex: number, position: { x: number; y: number }): FlowNode {
  const trigger = appIndex === 1;
  const type = nodeKindFor(app, trigger);
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
      ...(type === 'WebhookInner' ? { webhook_url: null } : {}),
    },
    selectedEvent:
      type === 'WebhookInner'
        ? { id: 'catch_hook', name: 'Catch Webhook' }
        : type === 'Api'
          ? { id: 'api_call', name: 'Make an API Call' }
          : null,
    app_status: { type: trigger ? 'Draft' : 'Loading' },
    configResponses: [],
    ...(type === 'Api' ? { selectedValue: defaultApiValue() } : {}),
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
      const id = nextNodeId(flow.apps);
      const position = { x: prev.position.x + CARD_WIDTH + ACTION_OFFSET, y: prev.position.y };
      const node = buildNode(op.app, id, prev.data.app_detail.app_index + 1, position);
      const link: FlowLink = { id: linkId(prev.id, id), source: prev.id, target: id, sourceHandle: null, targetHandle: null };
      return { apps: [...flow.apps, node], links: [...flow.links, link] };
    }
    case 'removeNode': {
      const node = flow.apps.find((n) => n.id === op.id);
      if (!node) return flow;
      if (isTriggerNode(node) && flow.apps.length > 1) return flow;
      return {
        apps: flow.apps.filter((n) => n.id !== op.id),
        links: flow.links.filter((l) => l.source !== op.id && l.target !== op.id),
      };
    }
    case 'moveNode':
      return mapNode(flow, op.id, (n) =>
        n.position.x === op.position.x && n.position.y === op.position.y ? n : { ...n, position: { ...op.position } },
      );
    case 'updateNodeData':
      return mapNode(flow, op.id, (n) => ({ ...n, data: { ...n.data, ...op.patch, node_id: n.data.node_id } }));
    case 'addLink': {
      if (op.source === op.target) return flow;
      const ids = new Set(flow.apps.map((n) => n.id));
      if (!ids.has(op.source) || !ids.has(op.target)) return flow;
      if (flow.links.some((l) => l.source === op.source && l.target === op.target)) return flow;
      const link: FlowLink = {
        id: linkId(op.source, op.target),
        source: op.source,
        target: op.target,
        sourceHandle: null,
        targetHandle: null,
      };
      return { apps: flow.apps, links: [...flow.links, link] };
    }
    case 'removeLink': {
      if (!flow.links.some((l) => l.id === op.id)) return flow;
      return { apps: flow.apps, links: flow.links.filter((l) => l.id !== op.id) };
    }
    case 'load':
      return { apps: op.flow.apps, links: op.flow.links };
  }
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
