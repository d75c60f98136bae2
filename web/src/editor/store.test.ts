import { describe, expect, it } from 'vitest';
import { apiApp, webhookApp } from './model/fixtures';
import type { ApiSelectedValue } from './model/types';
import { createEditorStore, HISTORY_LIMIT } from './store';

describe('editor store history', () => {
  it('undoes and redoes operations', () => {
    const store = createEditorStore();
    const { dispatch } = store.getState();
    dispatch({ type: 'addTrigger', app: webhookApp });
    dispatch({ type: 'addAction', app: apiApp });
    expect(store.getState().apps).toHaveLength(2);
    expect(store.getState().links).toHaveLength(1);

    store.getState().undo();
    expect(store.getState().apps).toHaveLength(1);
    expect(store.getState().links).toHaveLength(0);
    store.getState().undo();
    expect(store.getState().apps).toHaveLength(0);
    store.getState().undo(); // nothing left: no change
    expect(store.getState().apps).toHaveLength(0);

    store.getState().redo();
    store.getState().redo();
    expect(store.getState().apps.map((n) => n.id)).toEqual(['node-1', 'node-2']);
    expect(store.getState().links).toHaveLength(1);
    expect(store.getState().future).toHaveLength(0);
  });

  it('drops the redo stack on a new edit and records no-ops as nothing', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    store.getState().dispatch({ type: 'addAction', app: apiApp });
    store.getState().undo();
    expect(store.getState().future).toHaveLength(1);
    store.getState().dispatch({ type: 'updateNodeData', id: 'node-1', patch: { app_status: { type: 'Success' } } });
    expect(store.getState().future).toHaveLength(0);
    const pastBefore = store.getState().past.length;
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp }); // second trigger: no-op
    expect(store.getState().past).toHaveLength(pastBefore);
  });

  it('updates node data and undoes it', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    store.getState().dispatch({ type: 'addAction', app: apiApp });
    const value = store.getState().apps[1].data.selectedValue as ApiSelectedValue;
    store.getState().dispatch({
      type: 'updateNodeData',
      id: 'node-2',
      patch: { selectedValue: { ...value, apiDetails: { ...value.apiDetails, endpointURL: 'https://x.test' } } },
    });
    expect((store.getState().apps[1].data.selectedValue as ApiSelectedValue).apiDetails.endpointURL).toBe('https://x.test');
    store.getState().undo();
    expect((store.getState().apps[1].data.selectedValue as ApiSelectedValue).apiDetails.endpointURL).toBe('');
  });

  it('caps the undo stack at 100 steps', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    for (let i = 1; i <= 150; i++) {
      store.getState().dispatch({ type: 'moveNode', id: 'node-1', position: { x: i, y: 0 } });
    }
    expect(store.getState().past).toHaveLength(HISTORY_LIMIT);
    for (let i = 0; i < 200; i++) store.getState().undo();
    expect(store.getState().past).toHaveLength(0);
    // The oldest 51 steps are gone: undo stops at x = 50 with the trigger still there.
    expect(store.getState().apps[0].position.x).toBe(50);
    expect(store.getState().future).toHaveLength(HISTORY_LIMIT);
  });

  it('coalesces consecutive edits of one field into one undo step', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    for (const x of [1, 2, 3]) store.getState().dispatch({ type: 'moveNode', id: 'node-1', position: { x, y: 0 } }, 'typing');
    expect(store.getState().past).toHaveLength(2);
    store.getState().undo();
    expect(store.getState().apps[0].position.x).toBe(80);
  });

  it('records a finished drag as one step', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    store.getState().beginDrag();
    store.getState().onNodesChange([{ type: 'position', id: 'node-1', position: { x: 300, y: 40 }, dragging: true }]);
    store.getState().onNodesChange([{ type: 'position', id: 'node-1', position: { x: 310, y: 45 }, dragging: true }]);
    store.getState().endDrag();
    expect(store.getState().past).toHaveLength(2);
    store.getState().undo();
    expect(store.getState().apps[0].position).toEqual({ x: 80, y: 120 });
  });

  it('loads a saved flow with a fresh history', () => {
    const store = createEditorStore();
    store.getState().dispatch({ type: 'addTrigger', app: webhookApp });
    store.getState().loadSaved({ apps: [], links: [] }, { konnectId: 7, flowName: 'Saved' });
    expect(store.getState()).toMatchObject({ konnectId: 7, flowName: 'Saved', nameSet: true, past: [], future: [] });
  });
});
