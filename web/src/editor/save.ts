import type { SaveKonnectIn } from '../api/models';
import type { CanvasJson } from './model/types';
import { toCanvasJson } from './model/canvas';
import { canSave } from './model/rules';
import type { EditorState } from './store';

/** The api's save/publish body, with the editor's own document in canvas_json. */
export type SaveKonnectRequest = Omit<SaveKonnectIn, 'canvas_json'> & { canvas_json: CanvasJson };

export const NO_TRIGGER_WARNING = 'As you have not choosed trigger,Please make valid flow to save it';

/**
 * The save/publish body of the current editor state, or null when saving is refused client-side:
 * no trigger, or a trigger not tested yet (no konnect_id; its Test & Review creates the konnect).
 */
export function buildSaveRequest(state: EditorState, publish: boolean): SaveKonnectRequest | null {
  if (!canSave(state.apps, state.konnectId)) return null;
  return {
    konnect_id: state.konnectId,
    canvas_name: state.nameSet,
    canvas_json: toCanvasJson({ apps: state.apps, links: state.links }, state.flowName.trim(), state.runControl),
    publish,
  };
}
