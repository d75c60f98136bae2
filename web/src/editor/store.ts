/**
 * One zustand store per editor. Canvas edits go through `dispatch(op)`, which runs
 * the pure `applyOperation` and records the previous {apps, links} on a capped
 * undo stack. Transient React Flow changes (selection, measuring, dragging) are
 * applied without history; a finished drag is recorded as one step.
 */
import { applyNodeChanges, type NodeChange } from '@xyflow/react';
import { createStore } from 'zustand/vanilla';
import { applyOperation, type Operation } from './model/operations';
import type { Flow, FlowNode, RunControlSettings } from './model/types';

export const HISTORY_LIMIT = 100;

export interface EditorState extends Flow {
  past: Flow[];
  future: Flow[];
  flowName: string;
  /** True once the user named the flow (sent as canvas_name). */
  nameSet: boolean;
  konnectId: number | null;
  /** The flow as it was when a drag started; recorded on drag stop. */
  dragStart: Flow | null;
  /** Consecutive dispatches with the same key (typing in one field) share one undo step. */
  lastCoalesceKey: string | null;

  /** Tested nodes that were deleted (kept for undo, spec §4). */
  trash: FlowNode[];
  /** The loaded flow's fingerprint ({@link flowFingerprint}): leaving without a change does not prompt. */
  loadedFingerprint: string | null;
  /** The loaded flow's status (Published: live) and whether saved changes wait beside the live version. */
  loadedStatus: string | null;
  draftPending: boolean;
  /** The flow's Run settings (the top bar's dialog): saved as canvas_json.runControl. */
  runControl: RunControlSettings | null;

  /** Where the next action picked in the drawer goes (a router path's + or a join's +); null: after the last node. */
  addTarget: { after: string; handle: string | null } | null;
  setAddTarget: (target: { after: string; handle: string | null } | null) => void;

  dispatch: (op: Operation, coalesceKey?: string) => void;
  /** Status and test results: applied without an undo step. */
  patchNode: (id: string, patch: Partial<FlowNode['data']>) => void;
  setKonnectId: (id: number | null) => void;
  toTrash: (node: FlowNode) => void;
  undo: () => void;
  redo: () => void;
  onNodesChange: (changes: NodeChange<FlowNode>[]) => void;
  beginDrag: () => void;
  endDrag: () => void;
  /** Puts dragged nodes back where the drag started (a refused move). */
  cancelDrag: () => void;
  setFlowName: (name: string) => void;
  setRunControl: (settings: RunControlSettings | null) => void;
  loadSaved: (
    flow: Flow,
    opts: {
      konnectId: number | null;
      flowName: string;
      status?: string | null;
      draftPending?: boolean;
      runControl?: RunControlSettings | null;
    },
  ) => void;
}

/** Node data that the editor changes by itself (status spinners, collapsed sections): not an edit. */
const VOLATILE_DATA = new Set(['app_status']);

/** What saving would store of the flow (nodes, links, positions, name), without the editor's own UI state. */
export function flowFingerprint(
  state: Pick<EditorState, 'apps' | 'links' | 'flowName'> & { runControl?: RunControlSettings | null },
): string {
  const apps = state.apps.map((n) => ({
    id: n.id,
    type: n.type,
    x: Math.round(n.position.x),
    y: Math.round(n.position.y),
    data: Object.fromEntries(Object.entries(n.data as Record<string, unknown>).filter(([k]) => !VOLATILE_DATA.has(k))),
  }));
  const links = state.links.map((l) => [l.id, l.source, l.target, l.sourceHandle ?? null, l.targetHandle ?? null]);
  return JSON.stringify({ apps, links, name: state.flowName.trim(), runControl: state.runControl ?? null });
}

/** True when the canvas differs from what was loaded (always, for a flow that was never saved). */
export function hasUnsavedChanges(state: EditorState): boolean {
  return state.loadedFingerprint === null || flowFingerprint(state) !== state.loadedFingerprint;
}

function pushCapped(stack: Flow[], item: Flow): Flow[] {
  const next = [...stack, item];
  return next.length > HISTORY_LIMIT ? next.slice(next.length - HISTORY_LIMIT) : next;
}

const snapshot = (s: Flow): Flow => ({ apps: s.apps, links: s.links });

export function createEditorStore(initial?: Partial<Flow>) {
  return createStore<EditorState>()((set, get) => ({
    apps: initial?.apps ?? [],
    links: initial?.links ?? [],
    past: [],
    future: [],
    flowName: '',
    nameSet: false,
    konnectId: null,
    dragStart: null,
    lastCoalesceKey: null,
    trash: [],
    loadedFingerprint: null,
    loadedStatus: null,
    draftPending: false,
    runControl: null,
    addTarget: null,

    setAddTarget: (target) => set({ addTarget: target }),

    dispatch: (op, coalesceKey) => {
      const state = get();
      const current = snapshot(state);
      const next = applyOperation(current, op);
      if (next === current) return;
      const coalesce = coalesceKey !== undefined && coalesceKey === state.lastCoalesceKey;
      set({
        apps: next.apps,
        links: next.links,
        past: coalesce ? state.past : pushCapped(state.past, current),
        future: [],
        lastCoalesceKey: coalesceKey ?? null,
      });
    },

    patchNode: (id, patch) => {
      const next = applyOperation(snapshot(get()), { type: 'updateNodeData', id, patch });
      set({ apps: next.apps });
    },

    setKonnectId: (id) => set({ konnectId: id }),

    toTrash: (node) => set({ trash: [...get().trash, node].slice(-HISTORY_LIMIT) }),

    undo: () => {
      const state = get();
      const previous = state.past[state.past.length - 1];
      if (!previous) return;
      set({
        apps: previous.apps,
        links: previous.links,
        past: state.past.slice(0, -1),
        future: pushCapped(state.future, snapshot(state)),
        lastCoalesceKey: null,
      });
    },

    redo: () => {
      const state = get();
      const next = state.future[state.future.length - 1];
      if (!next) return;
      set({
        apps: next.apps,
        links: next.links,
        past: pushCapped(state.past, snapshot(state)),
        future: state.future.slice(0, -1),
        lastCoalesceKey: null,
      });
    },

    onNodesChange: (changes) => {
      // Removal goes through the Delete button (an operation); ignore keyboard removal.
      const kept = changes.filter((c) => c.type !== 'remove' && c.type !== 'add' && c.type !== 'replace');
      if (kept.length === 0) return;
      set({ apps: applyNodeChanges(kept, get().apps) });
    },

    beginDrag: () => set({ dragStart: snapshot(get()) }),

    endDrag: () => {
      const state = get();
      const start = state.dragStart;
      if (!start) return;
      const moved = state.apps.some((n) => {
        const before = start.apps.find((b) => b.id === n.id);
        return before && (before.position.x !== n.position.x || before.position.y !== n.position.y);
      });
      set({
        dragStart: null,
        lastCoalesceKey: null,
        ...(moved ? { past: pushCapped(state.past, start), future: [] } : {}),
      });
    },

    cancelDrag: () => {
      const start = get().dragStart;
      if (start) set({ apps: get().apps.map((n) => ({ ...n, position: start.apps.find((b) => b.id === n.id)?.position ?? n.position })), dragStart: null });
    },

    setFlowName: (name) => set({ flowName: name, nameSet: name.trim() !== '' }),

    setRunControl: (settings) => set({ runControl: settings }),

    loadSaved: (flow, { konnectId, flowName, status = null, draftPending = false, runControl = null }) =>
      set({
        apps: flow.apps,
        links: flow.links,
        past: [],
        future: [],
        konnectId,
        flowName,
        nameSet: flowName.trim() !== '',
        lastCoalesceKey: null,
        loadedFingerprint: flowFingerprint({ apps: flow.apps, links: flow.links, flowName, runControl }),
        loadedStatus: status,
        draftPending,
        runControl,
      }),
  }));
}

export type EditorStore = ReturnType<typeof createEditorStore>;
