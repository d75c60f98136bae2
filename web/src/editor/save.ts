import type { SaveKonnectRequest } from '../api/types';
import { toCanvasJson } from './model/canvas';
import { isTriggerNode } from './model/operations';
import type { EditorState } from './store';

export const NO_TRIGGER_WARNING = 'As you have not choosed trigger,Please make valid flow to save it';

/** The save/publish body of the current editor state, or null when there is no trigger. */
export function buildSaveRequest(state: EditorState, publish: boolean): SaveKonnectRequest | null {
  if (!state.apps.some(isTriggerNode)) return null;
  return {
    konnect_id: state.konnectId,
    canvas_name: state.nameSet,
    canvas_json: toCanvasJson({ apps: state.apps, links: state.links }, state.flowName.trim()),
    publish,
  };
}
