/**
 * The difference between two published canvases (two revisions of a flow), for the History panel:
 * nodes added, removed or changed (and, for a changed node, each field that differs, old -> new),
 * the connections added or removed and a new flow name. Pure: no React, no api.
 *
 * Only what the flow does is compared: a node's position on the canvas and the editor's own state
 * (its test result, the open/closed state of its sections) are left out.
 */

/** Node data keys that are the editor's state or a test's result, not what the flow does. */
export const IGNORED_DATA_KEYS: ReadonlySet<string> = new Set([
  'node_id',
  'app_status',
  'response_payload',
  'fetchFieldStatus',
  'testFilter',
  'customScriptOpen',
  'trigger_konnect_id',
  'delayReady',
  'sealed',
]);

/** Fields of a list's objects that name the object (so `headers[X-Source].value`, not `headers[0].value`). */
const IDENTITY_KEYS = ['config_key', 'key', 'id', 'label'] as const;

export interface FieldChange {
  /** Dotted path inside the node's data, e.g. `selectedValue.apiDetails.endpointURL` or `configResponses[text].value`. */
  path: string;
  before: unknown;
  after: unknown;
}

export type NodeChangeKind = 'added' | 'removed' | 'changed';

export interface NodeChange {
  id: string;
  /** The node's app and event, e.g. `Hash · Hash Text`. */
  label: string;
  kind: NodeChangeKind;
  /** For a changed node: the fields that differ (empty for added and removed nodes). */
  fields: FieldChange[];
}

export interface CanvasDiff {
  nodes: NodeChange[];
  linksAdded: string[];
  linksRemoved: string[];
  name: { before: string; after: string } | null;
  /** Nothing the flow does differs. */
  same: boolean;
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nodesOf(canvas: unknown): Map<string, Obj> {
  const apps = isObj(canvas) && Array.isArray(canvas.apps) ? canvas.apps : [];
  const nodes = new Map<string, Obj>();
  for (const node of apps) if (isObj(node) && typeof node.id === 'string') nodes.set(node.id, node);
  return nodes;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `App · Event` of a node (its id when it has neither). */
export function nodeLabel(node: Obj): string {
  const data = isObj(node.data) ? node.data : {};
  const app = isObj(data.app_detail) ? text(data.app_detail.name) : '';
  const event = isObj(data.selectedEvent) ? text(data.selectedEvent.name) : '';
  return [app, event].filter(Boolean).join(' · ') || text(node.id);
}

function identity(item: unknown): string | null {
  if (!isObj(item)) return null;
  for (const key of IDENTITY_KEYS) {
    const value = item[key];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}

/** Every leaf of `value` by its path (objects by key, lists by the identity of their items or index). */
function flatten(value: unknown, path: string, out: Map<string, unknown>, top = false): void {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.set(path, []);
      return;
    }
    // An item is named by its identity (its index when it has none); a repeated name gets #2, #3...
    const seen = new Map<string, number>();
    value.forEach((item, index) => {
      const id = identity(item) ?? String(index);
      const count = (seen.get(id) ?? 0) + 1;
      seen.set(id, count);
      flatten(item, `${path}[${count > 1 ? `${id}#${count}` : id}]`, out);
    });
    return;
  }
  if (isObj(value)) {
    const keys = Object.keys(value).filter((key) => !(top ? IGNORED_DATA_KEYS.has(key) : key === 'sealed'));
    if (keys.length === 0 && !top) {
      out.set(path, {});
      return;
    }
    for (const key of keys.sort()) flatten(value[key], path ? `${path}.${key}` : key, out);
    return;
  }
  out.set(path, value);
}

function fieldsOf(node: Obj): Map<string, unknown> {
  const out = new Map<string, unknown>();
  flatten(isObj(node.data) ? node.data : {}, '', out, true);
  if (node.type !== undefined) out.set('(kind)', node.type);
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The fields of two versions of one node that differ, in path order. */
export function diffNode(before: Obj, after: Obj): FieldChange[] {
  const old = fieldsOf(before);
  const now = fieldsOf(after);
  const paths = [...new Set([...old.keys(), ...now.keys()])].sort();
  return paths
    .filter((path) => !same(old.get(path), now.get(path)))
    .map((path) => ({ path, before: old.get(path), after: now.get(path) }));
}

function linkKeys(canvas: unknown, labels: Map<string, string>): Set<string> {
  const links = isObj(canvas) && Array.isArray(canvas.links) ? canvas.links : [];
  const keys = new Set<string>();
  for (const link of links) {
    if (!isObj(link)) continue;
    const source = text(link.source);
    const target = text(link.target);
    keys.add(`${labels.get(source) ?? source} → ${labels.get(target) ?? target}`);
  }
  return keys;
}

/** What changes from `before` to `after` (two canvas_json documents). */
export function diffCanvases(before: unknown, after: unknown): CanvasDiff {
  const old = nodesOf(before);
  const now = nodesOf(after);
  const nodes: NodeChange[] = [];
  for (const [id, node] of now) {
    const previous = old.get(id);
    if (previous === undefined) {
      nodes.push({ id, label: nodeLabel(node), kind: 'added', fields: [] });
      continue;
    }
    const fields = diffNode(previous, node);
    if (fields.length > 0) nodes.push({ id, label: nodeLabel(node), kind: 'changed', fields });
  }
  for (const [id, node] of old) if (!now.has(id)) nodes.push({ id, label: nodeLabel(node), kind: 'removed', fields: [] });

  const labels = new Map<string, string>();
  for (const [id] of [...old, ...now]) labels.set(id, id);
  const oldLinks = linkKeys(before, labels);
  const newLinks = linkKeys(after, labels);
  const linksAdded = [...newLinks].filter((key) => !oldLinks.has(key));
  const linksRemoved = [...oldLinks].filter((key) => !newLinks.has(key));

  const oldName = isObj(before) ? text(before.flowName) : '';
  const newName = isObj(after) ? text(after.flowName) : '';
  const name = oldName !== newName ? { before: oldName, after: newName } : null;
  return {
    nodes,
    linksAdded,
    linksRemoved,
    name,
    same: nodes.length === 0 && linksAdded.length === 0 && linksRemoved.length === 0 && name === null,
  };
}

/** A field's value as the panel shows it: text as is, nothing as an em dash, the rest as JSON (shortened). */
export function formatValue(value: unknown, max = 200): string {
  if (value === undefined || value === null || value === '') return '—';
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}
