/**
 * References between steps: `{{<node_id>.<dotted.path>}}` points into the output of
 * an earlier node (its test response; the webhook trigger's output is the request body).
 */
import { outputKeys } from './model/rules';
import type { FlowNode } from './model/types';

export interface ReferenceOption {
  value: string;
  label: string;
}

export const reference = (nodeId: string, path: string) => `{{${nodeId}.${path}}}`;

const PATH_RE = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** The output keys of a node: from its test response, else from its additional (output) fields. */
export function nodeOutputKeys(node: FlowNode): string[] {
  let raw = node.data.response_payload?.raw_response;
  // Later steps see one item of an iterator, not its {count, items}.
  if (node.data.app_detail.provider === 'iterator' && raw && typeof raw === 'object' && Array.isArray((raw as { items?: unknown }).items)) {
    raw = (raw as { items: unknown[] }).items[0] ?? {};
  }
  const keys = raw && typeof raw === 'object' ? outputKeys(raw) : [];
  for (const f of node.data.configResponses ?? []) if (f.additional && f.config_key && !keys.includes(f.config_key)) keys.push(f.config_key);
  return keys;
}

/**
 * Options for the '@' mention list of a field: every output key of the earlier nodes (from their
 * test responses), plus, while the user types a path, a free reference to that path on each one.
 */
export function referenceOptions(upstream: FlowNode[], search: string): ReferenceOption[] {
  const out: ReferenceOption[] = [];
  const seen = new Set<string>();
  const add = (value: string, label: string) => {
    if (seen.has(value)) return;
    seen.add(value);
    out.push({ value, label });
  };
  const needle = search.trim().toLowerCase();
  for (const node of upstream) {
    const app = node.data.app_detail.name;
    for (const key of nodeOutputKeys(node)) {
      if (needle && !key.toLowerCase().includes(needle) && !app.toLowerCase().includes(needle)) continue;
      add(reference(node.id, key), `${app} (${node.id}) › ${key}`);
    }
  }
  const path = search.trim();
  if (path && PATH_RE.test(path)) {
    for (const node of upstream) add(reference(node.id, path), `${node.data.app_detail.name} (${node.id}) › ${path}`);
  }
  return out;
}

/** Mentions insert '@' + value; a reference is stored without the '@'. */
export function stripMentionPrefix(text: string): string {
  return text.replace(/@(\{\{[^{}]+\}\})/g, '$1');
}
