/**
 * References between steps: `{{<node_id>.<dotted.path>}}` points into the output of
 * an earlier node (the webhook trigger's output is the JSON body of the request).
 */
import type { FlowNode } from './model/types';

export interface ReferenceOption {
  value: string;
  label: string;
}

export const reference = (nodeId: string, path: string) => `{{${nodeId}.${path}}}`;

const PATH_RE = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/**
 * Options for the '@' mention list of a field: every known output key of the
 * earlier nodes, plus, while the user types a path, a free reference to that path
 * on each earlier node.
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
    for (const entry of node.data.configResponses ?? []) {
      const key = entry.config_key;
      if (!key) continue;
      const text = `${entry.label ?? key} ${key}`.toLowerCase();
      if (needle && !text.includes(needle)) continue;
      add(reference(node.id, key), `${app} (${node.id}) › ${entry.label || key}`);
    }
  }
  const path = search.trim();
  if (path && PATH_RE.test(path)) {
    for (const node of upstream) {
      add(reference(node.id, path), `${node.data.app_detail.name} (${node.id}) › ${path}`);
    }
  }
  return out;
}

/** Mentions insert '@' + value; a reference is stored without the '@'. */
export function stripMentionPrefix(text: string): string {
  return text.replace(/@(\{\{[^{}]+\}\})/g, '$1');
}
