import { describe, expect, it } from 'vitest';
import { apiApp, webhookApp } from './fixtures';
import { ACTION_OFFSET, applyOperation, CARD_WIDTH, upstreamNodes, type Operation } from './operations';
import { fromCanvasJson, toCanvasJson } from './canvas';
import type { Flow } from './types';

const empty: Flow = { apps: [], links: [] };
const run = (...ops: Operation[]) => ops.reduce(applyOperation, empty);

describe('applyOperation', () => {
  it('adds the webhook trigger as node-1 in the canvas_json format', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp });
    expect(flow.apps).toHaveLength(1);
    const [node] = flow.apps;
    expect(node.id).toBe('node-1');
    expect(node.type).toBe('WebhookInner');
    expect(node.data).toMatchObject({
      node_id: 'node-1',
      app_detail: { id: 1, name: 'Webhook', provider: 'webhook', app_type: 'WEBHOOK', app_index: 1, side: 'left', webhook_url: null },
      selectedEvent: { id: 'catch_hook', name: 'Catch Webhook' },
      app_status: { type: 'Draft' },
      configResponses: [],
    });
  });

  it('allows only one trigger', () => {
    const once = run({ type: 'addTrigger', app: webhookApp });
    expect(applyOperation(once, { type: 'addTrigger', app: webhookApp })).toBe(once);
  });

  it('chains an action right of the previous node and links it', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp }, { type: 'addAction', app: apiApp });
    expect(flow.apps.map((n) => n.id)).toEqual(['node-1', 'node-2', 'node-3']);
    const [trigger, first, second] = flow.apps;
    expect(first.type).toBe('Api');
    expect(first.position.x).toBe(trigger.position.x + CARD_WIDTH + ACTION_OFFSET);
    expect(second.position.x).toBe(first.position.x + CARD_WIDTH + ACTION_OFFSET);
    expect(first.data.app_detail).toMatchObject({ app_index: 2, side: 'right', provider: 'api', app_type: 'ADD_ON' });
    expect(second.data.app_detail.app_index).toBe(3);
    expect(first.data.selectedEvent).toEqual({ id: 'api_call', name: 'Make an API Call' });
    // Never tested: a static Draft, not the in-flight Loading (no spinner for ever on the canvas).
    expect(first.data.app_status.type).toBe('Draft');
    expect(first.data.selectedValue).toEqual({
      wrap_in_array: 'NO',
      payload_type: 'JSON',
      apiDetails: { method: 'POST', endpointURL: '', headers: [], params: [], body: [] },
    });
    expect(flow.links).toEqual([
      { id: 'link-node-1-node-2', source: 'node-1', target: 'node-2', sourceHandle: null, targetHandle: null },
      { id: 'link-node-2-node-3', source: 'node-2', target: 'node-3', sourceHandle: null, targetHandle: null },
    ]);
  });

  it('needs a trigger before an action', () => {
    expect(applyOperation(empty, { type: 'addAction', app: apiApp })).toBe(empty);
  });

  it('updates node data without touching other nodes or the input', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    const before = JSON.stringify(flow);
    const next = applyOperation(flow, { type: 'updateNodeData', id: 'node-2', patch: { app_status: { type: 'Success' } } });
    expect(next.apps[1].data.app_status.type).toBe('Success');
    expect(next.apps[0]).toBe(flow.apps[0]);
    expect(JSON.stringify(flow)).toBe(before);
    expect(applyOperation(flow, { type: 'updateNodeData', id: 'nope', patch: {} })).toBe(flow);
  });

  it('removes an action and its links, but not a trigger while actions exist', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    expect(applyOperation(flow, { type: 'removeNode', id: 'node-1' })).toBe(flow);
    const next = applyOperation(flow, { type: 'removeNode', id: 'node-2' });
    expect(next.apps.map((n) => n.id)).toEqual(['node-1']);
    expect(next.links).toEqual([]);
    expect(applyOperation(next, { type: 'removeNode', id: 'node-1' }).apps).toEqual([]);
  });

  it('adds links once, between existing distinct nodes, and removes them', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp }, { type: 'addAction', app: apiApp });
    const linked = applyOperation(flow, { type: 'addLink', source: 'node-1', target: 'node-3' });
    expect(linked.links).toHaveLength(3);
    expect(applyOperation(linked, { type: 'addLink', source: 'node-1', target: 'node-3' })).toBe(linked);
    expect(applyOperation(linked, { type: 'addLink', source: 'node-1', target: 'node-1' })).toBe(linked);
    expect(applyOperation(linked, { type: 'addLink', source: 'node-1', target: 'node-9' })).toBe(linked);
    expect(applyOperation(linked, { type: 'removeLink', id: 'link-node-1-node-3' }).links).toHaveLength(2);
  });

  it('moves a node, and a move to the same place is a no-op', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp });
    const moved = applyOperation(flow, { type: 'moveNode', id: 'node-1', position: { x: 5, y: 6 } });
    expect(moved.apps[0].position).toEqual({ x: 5, y: 6 });
    expect(applyOperation(moved, { type: 'moveNode', id: 'node-1', position: { x: 5, y: 6 } })).toBe(moved);
  });

  it('lists upstream nodes in order', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp }, { type: 'addAction', app: apiApp });
    expect(upstreamNodes(flow.apps, 'node-3').map((n) => n.id)).toEqual(['node-1', 'node-2']);
    expect(upstreamNodes(flow.apps, 'node-1')).toEqual([]);
  });
});

describe('fromCanvasJson', () => {
  it('reads a saved Loading (no test in flight after a reload) as not tested', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    const json = toCanvasJson(flow, 'x');
    json.apps[1] = { ...json.apps[1], data: { ...json.apps[1].data, app_status: { type: 'Loading' } } };
    const loaded = fromCanvasJson(json);
    expect(loaded.apps.map((n) => n.data.app_status.type)).toEqual(['Draft', 'Draft']);
  });
});
