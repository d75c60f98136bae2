import { useCallback } from 'react';
import { useEditorStoreApi } from '../../EditorContext';
import type { FlowNodeData } from '../../model/types';

/** Edits of a node's data as one undo step (typing in one field coalesces into one). */
export function useNodeUpdate(id: string) {
  const store = useEditorStoreApi();
  const update = useCallback(
    (patch: Partial<FlowNodeData> | ((data: FlowNodeData) => Partial<FlowNodeData>), coalesce?: string) => {
      const node = store.getState().apps.find((n) => n.id === id);
      if (!node) return;
      const p = typeof patch === 'function' ? patch(node.data) : patch;
      store.getState().dispatch({ type: 'updateNodeData', id, patch: p }, coalesce === undefined ? undefined : `${id}:${coalesce}`);
    },
    [store, id],
  );
  /** A change on a tested node sends it back to Draft (coupon expiry, splitter segment). */
  const updateAndReset = useCallback(
    (patch: Partial<FlowNodeData>) => {
      update(patch);
      const node = store.getState().apps.find((n) => n.id === id);
      if (node && node.data.app_status.type === 'Success') store.getState().dispatch({ type: 'resetNode', id, full: false });
    },
    [store, id, update],
  );
  return { update, updateAndReset };
}
