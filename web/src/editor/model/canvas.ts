/** Conversion between the editor state and the saved `canvas_json`. */
import type { CanvasJson, Flow, FlowLink, FlowNode, RunControlSettings, SavedNode } from './types';
import { isTriggerNode } from './operations';

export function toCanvasJson(flow: Flow, flowName: string, runControl?: RunControlSettings | null): CanvasJson {
  const apps: SavedNode[] = flow.apps.map((n) => ({
    id: n.id,
    type: n.type,
    position: { x: n.position.x, y: n.position.y },
    data: n.data,
  }));
  const links: FlowLink[] = flow.links.map((l) => ({
    id: l.id,
    source: l.source,
    target: l.target,
    sourceHandle: l.sourceHandle ?? null,
    targetHandle: l.targetHandle ?? null,
  }));
  return { apps, links, dataForSelect: {}, flowName, ...(runControl ? { runControl } : {}) };
}

/** A saved flow is loadable only when its canvas_json has dataForSelect. */
export function isLoadableCanvas(json: Partial<CanvasJson> | null | undefined): json is CanvasJson {
  return Boolean(json && typeof json === 'object' && json.dataForSelect && Array.isArray(json.apps));
}

export function fromCanvasJson(json: CanvasJson, webhookUrl?: string | null): Flow {
  const apps: FlowNode[] = json.apps.map((n) => {
    // No test is in flight in a flow just loaded: a saved Loading (older drafts) reads as not tested.
    const data = n.data.app_status?.type === 'Loading' ? { ...n.data, app_status: { ...n.data.app_status, type: 'Draft' as const } } : n.data;
    const node: FlowNode = { id: n.id, type: n.type, position: n.position, data };
    if (webhookUrl && isTriggerNode(node) && node.type === 'WebhookInner' && !node.data.app_detail.webhook_url) {
      return { ...node, data: { ...node.data, app_detail: { ...node.data.app_detail, webhook_url: webhookUrl } } };
    }
    return node;
  });
  const links: FlowLink[] = (json.links ?? []).map((l, i) => ({
    id: l.id ?? `link-${l.source}-${l.target}-${i}`,
    source: l.source,
    target: l.target,
    sourceHandle: l.sourceHandle ?? null,
    targetHandle: l.targetHandle ?? null,
  }));
  return { apps, links };
}
