import { Spin } from 'antd';
import { useEffect, useState, type ReactNode } from 'react';
import { call, errorMessage, fetchClient } from '../api/typed';
import { useToast } from '../lib/useToast';
import { useEditorStoreApi } from './EditorContext';
import type { EditorStore } from './store';
import { fromCanvasJson, isLoadableCanvas } from './model/canvas';

/** Fetches a flow's draft (GET .../edit) and loads it into the store; false when its canvas cannot be opened. */
export async function loadFlow(store: EditorStore, konnectId: number, isLive: () => boolean = () => true): Promise<boolean> {
  const res = await call(fetchClient.GET('/api/v1/konnects/{konnect_id}/edit', { params: { path: { konnect_id: konnectId } } }));
  if (!isLive()) return true;
  const canvas = res.canvas_json;
  if (!isLoadableCanvas(canvas)) return false;
  store.getState().loadSaved(fromCanvasJson(canvas, res.webhook_url), {
    konnectId: res.konnect_id,
    flowName: res.konnect_name ?? canvas.flowName ?? '',
    status: res.status,
    draftPending: res.draft_pending ?? false,
    runControl: canvas.runControl ?? null,
  });
  return true;
}

/** Loads /create/{id} into the store (a flow loads only when its canvas_json has dataForSelect). */
export function FlowLoader({ id, children }: { id: string | undefined; children: ReactNode }) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const [loadedId, setLoadedId] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (!id) return;
    let live = true;
    loadFlow(store, Number(id), () => live)
      .then((loadable) => {
        if (!live) return;
        if (!loadable) void toast.warning('This flow cannot be opened in the editor.');
        setLoadedId(id);
      })
      .catch((err) => {
        if (!live) return;
        void toast.error(errorMessage(err, 'Something went wrong!'));
        setLoadedId(id);
      });
    return () => {
      live = false;
    };
  }, [id, store, toast]);

  if (id && loadedId !== id) return <Spin className="kz-editor-loading" size="large" />;
  return <>{children}</>;
}
