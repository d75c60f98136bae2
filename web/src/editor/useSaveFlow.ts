import { useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiError, call, errorMessage, fetchClient } from '../api/typed';
import { useToast } from '../lib/useToast';
import { useEditorStoreApi } from './EditorContext';
import { TOAST_MS } from './model/rules';
import { buildSaveRequest, NO_TRIGGER_WARNING } from './save';

/** Seconds a publish refused with 409 stays on screen: the message says what changed in the cluster
 *  (kubectl, a GitOps tool) and how to publish; it is long, and the editor keeps the user's version. */
export const CONFLICT_TOAST_S = 15;

/**
 * Save (draft) and Publish: both show the server message and go to /flows/home. Without a tested
 * trigger (no konnect_id) they are refused here with the spec's warning, as without a trigger.
 */
export function useSaveFlow() {
  const store = useEditorStoreApi();
  const toast = useToast();
  const navigate = useNavigate();
  const [saving, setSaving] = useState<'save' | 'publish' | null>(null);

  const save = async (publish: boolean): Promise<boolean> => {
    const body = buildSaveRequest(store.getState(), publish);
    if (!body) {
      void toast.warning(NO_TRIGGER_WARNING, TOAST_MS / 1000);
      return false;
    }
    setSaving(publish ? 'publish' : 'save');
    try {
      const path = publish ? '/api/v1/konnects/publish_konnect' : '/api/v1/konnects/save_konnect';
      const res = await call(fetchClient.POST(path, { body }));
      void toast.success(res.message || (publish ? 'Flow published.' : 'Flow saved.'), TOAST_MS / 1000);
      navigate('/flows/home');
      return true;
    } catch (err) {
      const conflict = err instanceof ApiError && err.status === 409;
      void toast.error(errorMessage(err, 'Something went wrong!'), conflict ? CONFLICT_TOAST_S : TOAST_MS / 1000);
      setSaving(null);
      return false;
    }
  };
  return { save, saving };
}
