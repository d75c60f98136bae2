/**
 * References between steps: `{{<node_id>.<dotted.path>}}` points into the output of
 * an earlier node (its test response; the webhook trigger's output is the request body).
 */
import { outputKeys } from './model/rules';
import type { FlowLink, FlowNode } from './model/types';
import { kindOf } from './nodes/registry';

export interface ReferenceOption {
  value: string;
  label: string;
}

export const reference = (nodeId: string, path: string) => `{{${nodeId}.${path}}}`;

/**
 * The output keys of a node: from its test response, else from its additional (output) fields,
 * else (given the flow) what its kind derives from the flow (a join: each path's last step's keys
 * under the path's name).
 */
export function nodeOutputKeys(node: FlowNode, flow?: { apps: FlowNode[]; links: FlowLink[] }): string[] {
  let raw = node.data.response_payload?.raw_response;
  // A kind may expose part of its response (later steps see one item of an iterator, not its {count, items}).
  const outputs = kindOf(node.data)?.outputs;
  if (outputs) raw = outputs(raw);
  const keys = raw && typeof raw === 'object' ? outputKeys(raw) : [];
  for (const f of node.data.configResponses ?? []) if (f.additional && f.config_key && !keys.includes(f.config_key)) keys.push(f.config_key);
  const derived = flow ? kindOf(node.data)?.outputKeysIn?.(node, flow, (n) => nodeOutputKeys(n, flow)) : undefined;
  for (const k of derived ?? []) if (!keys.includes(k)) keys.push(k);
  return keys;
}

/** A reference found in a field's text. */
export interface FoundReference {
  /** The template as stored, `{{node-1.customer.name}}`. */
  raw: string;
  nodeId: string;
  path: string;
}

// The path may hold spaces inside (a router path's name under a join: {{node-5.Big orders.total}}).
const REF_RE = /\{\{\s*([A-Za-z0-9_$-]+)\.([^{}\s](?:[^{}]*[^{}\s])?)\s*\}\}/g;

/** The references of a text, each once, in order. */
export function findReferences(text: string): FoundReference[] {
  const out: FoundReference[] = [];
  for (const m of text.matchAll(REF_RE)) {
    if (!out.some((r) => r.raw === m[0])) out.push({ raw: m[0], nodeId: m[1], path: m[2] });
  }
  return out;
}

/**
 * A step as people name it: its app's (or add-on's) name; when two steps share a name, its step
 * number follows ("Formatter (step 3)"). Undefined when the flow has no such node.
 */
export function stepLabel(apps: FlowNode[], nodeId: string): string | undefined {
  const index = apps.findIndex((n) => n.id === nodeId);
  if (index < 0) return undefined;
  const detail = apps[index].data.app_detail;
  const name = detail.name.trim() || detail.provider || nodeId;
  const twins = apps.filter((n) => (n.data.app_detail.name.trim() || n.data.app_detail.provider || n.id) === name);
  return twins.length > 1 ? `${name} (step ${index + 1})` : name;
}

/** "Webhook › customer › name" for `{{node-1.customer.name}}`; a missing step keeps its node id. */
export function referenceLabel(apps: FlowNode[], nodeId: string, path: string): string {
  return [stepLabel(apps, nodeId) ?? nodeId, ...path.split('.')].join(' › ');
}

/**
 * Options for the '@' mention list of a field: the output keys of the earlier nodes (their test
 * responses, else their declared output fields) whose path contains the typed text (any case).
 * Only keys that exist are offered: nothing is made up from the typed text.
 */
export function referenceOptions(upstream: FlowNode[], search: string, apps: FlowNode[] = upstream, links?: FlowLink[]): ReferenceOption[] {
  const out: ReferenceOption[] = [];
  const seen = new Set<string>();
  const needle = search.trim().toLowerCase();
  for (const node of upstream) {
    for (const key of nodeOutputKeys(node, links ? { apps, links } : undefined)) {
      if (needle && !key.toLowerCase().includes(needle)) continue;
      const value = reference(node.id, key);
      if (seen.has(value)) continue;
      seen.add(value);
      out.push({ value, label: referenceLabel(apps, node.id, key) });
    }
  }
  return out;
}

/** What the '@' list says when it is empty. */
export function noReferenceText(upstream: FlowNode[], search: string): string {
  if (upstream.length === 0) return 'No earlier steps';
  const typed = search.trim();
  if (typed) return `No field matches '${typed}'`;
  return 'Test the earlier steps to list their fields';
}

/** Mentions insert '@' + value; a reference is stored without the '@'. */
export function stripMentionPrefix(text: string): string {
  return text.replace(/@(\{\{[^{}]+\}\})/g, '$1');
}
