/** Delete, refresh and deselect of a node (spec §4 Deleting a node, Trigger handling). */
import { useReactFlow } from '@xyflow/react';
import { useCallback } from 'react';
import { errorMessage } from '../../../api/typed';
import { useToast } from '../../../lib/useToast';
import { useEditorStoreApi } from '../../EditorContext';
import { deleteActivity } from '../../api/editorApi';
import { toCanvasJson } from '../../model/canvas';
import { applyOperation, isTriggerNode } from '../../model/operations';
import { MSG, TOAST_MS } from '../../model/rules';

export function useNodeActions(id: string) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const { updateNode } = useReactFlow();

  const remove = useCallback(async () => {
    const state = store.getState();
    const node = state.apps.find((n) => n.id === id);
    if (!node) return;
    if (isTriggerNode(node) && state.apps.length > 1) {
      void toast.warning(MSG.triggerDelete, TOAST_MS / 1000);
      return;
    }
    const activity = node.data.response_payload?.konnect_activity_id ?? null;
    // Its timer goes with it; a tested node is kept in the trash for undo.
    state.patchNode(id, { timerConfigs: null, delayReady: false });
    if (node.data.response_payload && state.konnectId) {
      state.toTrash(node);
      const next = applyOperation({ apps: state.apps, links: state.links }, { type: 'removeNode', id });
      try {
        const reply = await deleteActivity({
          konnect_id: state.konnectId,
          konnect_activity_id: activity,
          nodeId: id,
          canvas_json: toCanvasJson(next, state.flowName.trim()),
        });
        if (reply.message) void toast.info(reply.message, TOAST_MS / 1000);
      } catch (err) {
        void toast.warning(errorMessage(err, 'Something went wrong!'), TOAST_MS / 1000);
      }
    }
    store.getState().dispatch({ type: 'removeNode', id });
  }, [store, toast, id]);

  const refresh = useCallback(() => store.getState().dispatch({ type: 'resetNode', id, full: false }), [store, id]);

  /** Deselecting a lone trigger empties the canvas and re-opens the app search. */
  const deselect = useCallback(() => {
    const state = store.getState();
    const node = state.apps.find((n) => n.id === id);
    if (node && isTriggerNode(node) && state.apps.length === 1) {
      state.dispatch({ type: 'removeNode', id });
      return;
    }
    updateNode(id, { selected: false });
  }, [store, id, updateNode]);

  return { remove, refresh, deselect };
}
