import { describe, expect, it } from 'vitest';
import { toCanvasJson } from '../../model/canvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation, insertRefusal, upstreamNodes, type Operation } from '../../model/operations';
import { joinOf, pathNodes, PATH_ROW } from '../../model/paths';
import type { Flow, FlowNode } from '../../model/types';
import { findReferences, referenceOptions } from '../../references';
import { routerProblem } from './kind';

const routerApp = addOn('router', 'Router', 40);
const joinApp = addOn('join', 'Join', 41);
const hash = addOn('hash', 'Hash', 13);
const formatter = addOn('formatter', 'Formatter', 12);

const run = (ops: Operation[], start: Flow = { apps: [], links: [] }) => ops.reduce(applyOperation, start);
const node = (flow: Flow, id: string) => flow.apps.find((n) => n.id === id) as FlowNode;
const index = (flow: Flow, id: string) => node(flow, id).data.app_detail.app_index;
const linksOf = (flow: Flow) => flow.links.map((l) => `${l.source}${l.sourceHandle ? `[${l.sourceHandle}]` : ''}->${l.target}`).sort();

/** Webhook -> Router (path-1, path-2). */
const base = () => run([{ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: routerApp }]);

describe('the router kind', () => {
  it('is added as a router node with two paths (the second Otherwise), saved in the shared shape', () => {
    const flow = base();
    const router = node(flow, 'node-2');
    expect(router.type).toBe('router');
    const saved = toCanvasJson(flow, 'f').apps[1];
    expect(saved.type).toBe('router');
    expect(saved.data.app_detail.provider).toBe('router');
    expect(saved.data.routerMode).toBe('parallel');
    expect(saved.data.routerPaths?.map((p) => [p.id, p.name, p.otherwise])).toEqual([
      ['path-1', 'Path 1', false],
      ['path-2', 'Path 2', true],
    ]);
  });

  it('refuses a test while a path has no complete condition, a bad name, or two Otherwise paths', () => {
    const paths = node(base(), 'node-2').data.routerPaths ?? [];
    expect(routerProblem({ routerPaths: paths })).toMatch(/Path 1: fill each condition/);
    const filled = [{ ...paths[0], conditions: [{ id: 'c1', field: '{{node-1.amount}}', operator: 'Greater Than', valueOfFilter: '100', joinWith: '' as const }] }, paths[1]];
    expect(routerProblem({ routerPaths: filled })).toBeNull();
    expect(routerProblem({ routerPaths: [filled[0], { ...paths[1], name: 'Path 1' }] })).toMatch(/Another path has this name/);
    expect(routerProblem({ routerPaths: [filled[0], { ...paths[1], name: ' x' }] })).toMatch(/letters, digits/);
    expect(routerProblem({ routerPaths: [{ ...paths[1], id: 'path-3', name: 'A' }, paths[1]] })).toMatch(/Only one path/);
    expect(routerProblem({ routerPaths: [filled[0], { ...paths[1], otherwise: false, conditions: [] }] })).toMatch(/Path 2: add a condition/);
  });

  it('adds a step on each path by its handle, a second step at the end of its path, rows one per path, run order in app_index', () => {
    const flow = run(
      [
        { type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' },
        { type: 'addAction', app: formatter, after: 'node-2', handle: 'path-2' },
        { type: 'addAction', app: formatter, after: 'node-2', handle: 'path-1' },
      ],
      base(),
    );
    expect(linksOf(flow)).toEqual(['node-1->node-2', 'node-2[path-1]->node-3', 'node-2[path-2]->node-4', 'node-3->node-5'].sort());
    expect(pathNodes(flow, 'node-2', 'path-1').map((n) => n.id)).toEqual(['node-3', 'node-5']);
    expect(pathNodes(flow, 'node-2', 'path-2').map((n) => n.id)).toEqual(['node-4']);
    // Router, path 1's steps, then path 2's.
    expect(['node-1', 'node-2', 'node-3', 'node-5', 'node-4'].map((id) => index(flow, id))).toEqual([1, 2, 3, 4, 5]);
    const router = node(flow, 'node-2');
    expect(node(flow, 'node-3').position.y).toBe(router.position.y);
    expect(node(flow, 'node-4').position.y).toBe(router.position.y + PATH_ROW);
    expect(node(flow, 'node-5').position.x).toBeGreaterThan(node(flow, 'node-3').position.x);
    // The toolbar's Add action after a router with a free path starts that path.
    const free = run([{ type: 'addAction', app: hash }], base());
    expect(linksOf(free)).toContain('node-2[path-1]->node-3');
  });

  it('joins the paths from the end of each (the router itself for an empty path); the join + adds the step after it', () => {
    let flow = run([{ type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' }, { type: 'joinPaths', router: 'node-2', app: joinApp }], base());
    const join = joinOf(flow, 'node-2') as FlowNode;
    expect(join.id).toBe('node-4');
    expect(join.type).toBe('join');
    expect(join.data.joinWait).toBe('all');
    expect(linksOf(flow)).toEqual(['node-1->node-2', 'node-2[path-1]->node-3', 'node-2[path-2]->node-4', 'node-3->node-4'].sort());
    expect(new Set(flow.links.map((l) => l.id)).size).toBe(flow.links.length);
    // A second join is refused; adding a step to the empty path puts it before the join.
    expect(applyOperation(flow, { type: 'joinPaths', router: 'node-2', app: joinApp })).toBe(flow);
    flow = run([{ type: 'addAction', app: formatter, after: 'node-2', handle: 'path-2' }, { type: 'addAction', app: formatter, after: 'node-4', handle: null }], flow);
    expect(linksOf(flow)).toEqual(
      ['node-1->node-2', 'node-2[path-1]->node-3', 'node-2[path-2]->node-5', 'node-5->node-4', 'node-3->node-4', 'node-4->node-6'].sort(),
    );
    expect(['node-2', 'node-3', 'node-5', 'node-4', 'node-6'].map((id) => index(flow, id))).toEqual([2, 3, 4, 5, 6]);
    expect(node(flow, 'node-4').position.x).toBeGreaterThan(node(flow, 'node-5').position.x);
    // The toolbar's Add action goes after the last node (the step after the join).
    expect(linksOf(run([{ type: 'addAction', app: hash }], flow))).toContain('node-6->node-7');
    // A path added later goes straight to the join; removing it takes its link away.
    const more = applyOperation(flow, { type: 'addPath', router: 'node-2' });
    expect(node(more, 'node-2').data.routerPaths?.map((p) => p.name)).toEqual(['Path 1', 'Path 2', 'Path 3']);
    expect(linksOf(more)).toContain('node-2[path-3]->node-4');
    expect(linksOf(applyOperation(more, { type: 'removePath', router: 'node-2', path: 'path-3' }))).toEqual(linksOf(flow));
  });

  it('relinks when a step on a path, the join or the router is deleted', () => {
    const flow = run(
      [
        { type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' },
        { type: 'addAction', app: formatter, after: 'node-2', handle: 'path-1' },
        { type: 'joinPaths', router: 'node-2', app: joinApp },
        { type: 'addAction', app: hash, after: 'node-5', handle: null },
      ],
      base(),
    );
    // node-3 -> node-4 on path 1, path 2 empty, join node-5, then node-6.
    const noFirst = applyOperation(flow, { type: 'removeNode', id: 'node-3' });
    expect(linksOf(noFirst)).toEqual(['node-1->node-2', 'node-2[path-1]->node-4', 'node-2[path-2]->node-5', 'node-4->node-5', 'node-5->node-6'].sort());
    const emptied = applyOperation(noFirst, { type: 'removeNode', id: 'node-4' });
    expect(linksOf(emptied)).toEqual(['node-1->node-2', 'node-2[path-1]->node-5', 'node-2[path-2]->node-5', 'node-5->node-6'].sort());
    expect(index(emptied, 'node-6')).toBe(4);
    // The join: the step after it follows the end of the first path.
    const noJoin = applyOperation(flow, { type: 'removeNode', id: 'node-5' });
    expect(linksOf(noJoin)).toEqual(['node-1->node-2', 'node-2[path-1]->node-3', 'node-3->node-4', 'node-4->node-6'].sort());
    // The router: its paths' steps and join go; the step after the join follows the trigger.
    const noRouter = applyOperation(flow, { type: 'removeNode', id: 'node-2' });
    expect(noRouter.apps.map((n) => n.id)).toEqual(['node-1', 'node-6']);
    expect(linksOf(noRouter)).toEqual(['node-1->node-6']);
    expect(index(noRouter, 'node-6')).toBe(2);
  });

  it('refuses a router, a join, a delay or an iterator on a path', () => {
    const flow = run([{ type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' }], base());
    expect(insertRefusal(flow, addOn('delay', 'Delay'), 'node-2', 'path-2')).toMatch(/delay cannot be on a path/);
    expect(insertRefusal(flow, addOn('iterator', 'Iterator'), 'node-3', null)).toMatch(/iterator cannot be on a path/);
    expect(insertRefusal(flow, routerApp, 'node-3', null)).toMatch(/one level of paths/);
    expect(applyOperation(flow, { type: 'addAction', app: routerApp, after: 'node-3', handle: null })).toBe(flow);
    expect(insertRefusal(flow, hash, 'node-2', 'path-2')).toBeNull();
    expect(insertRefusal(flow, addOn('delay', 'Delay'), 'node-1', null)).toBeNull();
  });
});

describe('references in a flow with paths', () => {
  const tested = (flow: Flow, id: string, raw: unknown): Flow =>
    applyOperation(flow, {
      type: 'updateNodeData',
      id,
      patch: { response_payload: { display_message: '', raw_response: raw, konnect_activity_id: null, konnect_id: null, test_status: 'success' } },
    });
  const built = () => {
    let flow = run(
      [
        { type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' },
        { type: 'addAction', app: formatter, after: 'node-2', handle: 'path-2' },
        { type: 'joinPaths', router: 'node-2', app: joinApp },
        { type: 'addAction', app: formatter, after: 'node-5', handle: null },
      ],
      base(),
    );
    flow = applyOperation(flow, { type: 'updateNodeData', id: 'node-2', patch: { routerPaths: [{ id: 'path-1', name: 'Big orders', otherwise: false, conditions: [] }, { id: 'path-2', name: 'Small', otherwise: true, conditions: [] }] } });
    flow = tested(flow, 'node-1', { amount: 120 });
    flow = tested(flow, 'node-3', { digest: 'abc' });
    return tested(flow, 'node-4', { output: 'ADA' });
  };

  it('offers a step on a path only what is upstream along the links', () => {
    const flow = built();
    expect(upstreamNodes(flow.apps, 'node-4', flow.links).map((n) => n.id)).toEqual(['node-1', 'node-2']);
    expect(upstreamNodes(flow.apps, 'node-3', flow.links).map((n) => n.id)).toEqual(['node-1', 'node-2']);
    const values = referenceOptions(upstreamNodes(flow.apps, 'node-4', flow.links), '', flow.apps, flow.links).map((o) => o.value);
    expect(values).toContain('{{node-1.amount}}');
    expect(values).not.toContain('{{node-3.digest}}');
  });

  it("offers a step after the join the join's outputs under each path's name and every path step's outputs", () => {
    const flow = built();
    const upstream = upstreamNodes(flow.apps, 'node-6', flow.links);
    expect(upstream.map((n) => n.id)).toEqual(['node-1', 'node-2', 'node-3', 'node-4', 'node-5']);
    const options = referenceOptions(upstream, '', flow.apps, flow.links);
    const values = options.map((o) => o.value);
    expect(values).toEqual(expect.arrayContaining(['{{node-5.Big orders.digest}}', '{{node-5.Small.output}}', '{{node-3.digest}}', '{{node-4.output}}', '{{node-1.amount}}']));
    expect(options.find((o) => o.value === '{{node-5.Big orders.digest}}')?.label).toBe('Join › Big orders › digest');
    // A reference with a path name holding a space is read back whole.
    expect(findReferences('total {{node-5.Big orders.digest}} and {{ node-1.amount }}')).toEqual([
      { raw: '{{node-5.Big orders.digest}}', nodeId: 'node-5', path: 'Big orders.digest' },
      { raw: '{{ node-1.amount }}', nodeId: 'node-1', path: 'node-1.amount'.slice(7) },
    ]);
  });
});
