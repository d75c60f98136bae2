import { describe, expect, it } from 'vitest';
import { diffCanvases, diffNode, formatValue } from './diff';

function node(id: string, app: string, data: Record<string, unknown> = {}, position = { x: 0, y: 0 }) {
  return {
    id,
    type: 'Action',
    position,
    data: { node_id: id, app_detail: { name: app }, selectedEvent: { name: `${app} event` }, ...data },
  };
}

function canvas(apps: ReturnType<typeof node>[], links: [string, string][] = [], flowName = 'Flow') {
  return {
    apps,
    links: links.map(([source, target], i) => ({ id: `e${i}`, source, target, sourceHandle: null, targetHandle: null })),
    dataForSelect: {},
    flowName,
  };
}

const hashText = (value: string) => ({
  configResponses: [
    { config_key: 'text', label: 'Text', value },
    { config_key: 'algorithm', label: 'Algorithm', value: 'sha256' },
  ],
});

describe('diffCanvases', () => {
  it('finds nothing between equal canvases, whatever the positions and test results', () => {
    const a = canvas([node('node-1', 'Webhook'), node('node-2', 'Hash', hashText('{{node-1.email}}'))], [['node-1', 'node-2']]);
    const b = canvas(
      [
        node('node-1', 'Webhook', { app_status: { type: 'Success' }, response_payload: { raw_response: { a: 1 } } }, { x: 50, y: 9 }),
        node('node-2', 'Hash', hashText('{{node-1.email}}')),
      ],
      [['node-1', 'node-2']],
    );
    const diff = diffCanvases(a, b);
    expect(diff.same).toBe(true);
    expect(diff.nodes).toEqual([]);
  });

  it('names added, removed and changed nodes, with each changed field old -> new', () => {
    const before = canvas(
      [node('node-1', 'Webhook'), node('node-2', 'Hash', hashText('{{node-1.email}}')), node('node-3', 'Filter')],
      [['node-1', 'node-2'], ['node-2', 'node-3']],
    );
    const after = canvas(
      [node('node-1', 'Webhook'), node('node-2', 'Hash', hashText('v2-{{node-1.email}}')), node('node-4', 'Formatter')],
      [['node-1', 'node-2'], ['node-2', 'node-4']],
      'Flow v2',
    );
    const diff = diffCanvases(before, after);
    expect(diff.same).toBe(false);
    expect(diff.nodes.map((n) => [n.id, n.kind, n.label])).toEqual([
      ['node-2', 'changed', 'Hash · Hash event'],
      ['node-4', 'added', 'Formatter · Formatter event'],
      ['node-3', 'removed', 'Filter · Filter event'],
    ]);
    expect(diff.nodes[0].fields).toEqual([
      { path: 'configResponses[text].value', before: '{{node-1.email}}', after: 'v2-{{node-1.email}}' },
    ]);
    expect(diff.linksAdded).toEqual(['node-2 → node-4']);
    expect(diff.linksRemoved).toEqual(['node-2 → node-3']);
    expect(diff.name).toEqual({ before: 'Flow', after: 'Flow v2' });
  });

  it('compares lists by their items’ keys, not their order, and reports fields that appear or vanish', () => {
    const a = node('node-2', 'API', {
      selectedValue: { apiDetails: { method: 'POST', endpointURL: 'https://a', headers: [{ key: 'X-A', value: '1' }] } },
    });
    const b = node('node-2', 'API', {
      selectedValue: {
        apiDetails: { method: 'PUT', endpointURL: 'https://a', headers: [{ key: 'X-B', value: '2' }, { key: 'X-A', value: '1' }] },
        extra: true,
      },
    });
    expect(diffNode(a, b)).toEqual([
      { path: 'selectedValue.apiDetails.headers[X-B].key', before: undefined, after: 'X-B' },
      { path: 'selectedValue.apiDetails.headers[X-B].value', before: undefined, after: '2' },
      { path: 'selectedValue.apiDetails.method', before: 'POST', after: 'PUT' },
      { path: 'selectedValue.extra', before: undefined, after: true },
    ]);
  });

  it('names list items without a key by their index and repeated keys by their count', () => {
    const a = node('node-2', 'Hash', { configResponses: [{ value: 'a' }, { config_key: 'text', value: 'x' }, { config_key: 'text', value: 'y' }] });
    const b = node('node-2', 'Hash', { configResponses: [{ value: 'b' }, { config_key: 'text', value: 'x' }, { config_key: 'text', value: 'z' }] });
    expect(diffNode(a, b).map((f) => f.path)).toEqual(['configResponses[0].value', 'configResponses[text#2].value']);
  });

  it('never shows sealed secret values and survives documents that are not canvases', () => {
    const a = node('node-2', 'API', { selectedValue: { headers: [{ key: 'Authorization', value: '', sealed: 'gAAA1' }] } });
    const b = node('node-2', 'API', { selectedValue: { headers: [{ key: 'Authorization', value: '', sealed: 'gAAA2' }] } });
    expect(diffNode(a, b)).toEqual([]);
    expect(diffCanvases(null, { apps: 'nope' }).same).toBe(true);
    expect(diffCanvases(undefined, canvas([node('node-1', 'Webhook')])).nodes[0].kind).toBe('added');
  });
});

describe('formatValue', () => {
  it('shows text as is, nothing as a dash and long values shortened', () => {
    expect(formatValue('abc')).toBe('abc');
    expect(formatValue(undefined)).toBe('—');
    expect(formatValue('')).toBe('—');
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
    expect(formatValue('x'.repeat(300), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
