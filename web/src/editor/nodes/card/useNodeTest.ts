/** Test & Review and Capture Response of a node (spec §4 Testing, Webhook capture). */
import { useCallback, useEffect, useRef } from 'react';
import { ApiError, errorMessage } from '../../../api/typed';
import { useToast } from '../../../lib/useToast';
import { useEditorStoreApi } from '../../EditorContext';
import { captureWebhook, testAndReview, type TestOut } from '../../api/editorApi';
import { isTriggerNode } from '../../model/operations';
import { isSuccess, missingMandatory, MSG, outputKeys, RESPONSE_PREVIEW, TOAST_MS, WEBHOOK_POLL_MS } from '../../model/rules';
import { buildTestBody } from '../../model/testPayload';
import type { ConfigResponse, FlowNode } from '../../model/types';
import type { EditorStore } from '../../store';
import { kindOf } from '../registry';
import { POPUP_BLOCKED, useScriptPopup } from './useScriptPopup';

type Reply = Pick<TestOut, 'display_message' | 'raw_response'> & {
  test_status: string;
  konnect_id?: number | null;
  konnect_activity_id?: number | null;
  webhook_url?: string | null;
  pass_through_condition?: boolean | null;
  konnect_custom?: { script_id: number } | null;
};

/** The response's keys as additional (mappable) outputs; the first 3 visible. */
export function additionalOutputs(raw: unknown): ConfigResponse[] {
  return outputKeys(raw).map((key, i) => ({ label: key, config_key: key, additional: true, visible: i < RESPONSE_PREVIEW }));
}

/** Store a test reply on the node: Success or Error, its response, the konnect id on the trigger. */
export function applyReply(store: EditorStore, id: string, reply: Reply): boolean {
  const state = store.getState();
  const node = state.apps.find((n) => n.id === id);
  if (!node) return false;
  const ok = isSuccess(reply.test_status);
  const inputs = (node.data.configResponses ?? []).filter((f) => !f.additional);
  state.patchNode(id, {
    app_status: { ...node.data.app_status, type: ok ? 'Success' : 'Error', errorMessage: reply.display_message, showResponse: ok },
    response_payload: {
      display_message: reply.display_message,
      raw_response: reply.raw_response ?? {},
      konnect_activity_id: reply.konnect_activity_id ?? null,
      konnect_id: reply.konnect_id ?? null,
      test_status: reply.test_status,
      pass_through_condition: reply.pass_through_condition ?? null,
      konnect_custom: reply.konnect_custom ?? null,
    },
    configResponses: ok ? [...inputs, ...additionalOutputs(reply.raw_response)] : inputs,
    ...(reply.webhook_url ? { app_detail: { ...node.data.app_detail, webhook_url: reply.webhook_url } } : {}),
  });
  if (ok && isTriggerNode(node) && reply.konnect_id) {
    state.setKonnectId(reply.konnect_id);
    for (const other of store.getState().apps) {
      if (!isTriggerNode(other)) store.getState().patchNode(other.id, { trigger_konnect_id: reply.konnect_id });
    }
  }
  return ok;
}

function refusal(err: unknown): Reply {
  if (err instanceof ApiError && typeof err.body.display_message === 'string') {
    return { test_status: 'Error', display_message: err.body.display_message, raw_response: {} };
  }
  return { test_status: 'Error', display_message: errorMessage(err, MSG.testFailed), raw_response: {} };
}

/** Why a node cannot be tested now (mandatory fields, its kind's own rule such as the coupon's expiry, trigger first), or null. */
export function testBlocker(apps: FlowNode[], konnectId: number | null, node: FlowNode): string | null {
  if (missingMandatory(node.data.configResponses).length > 0) return MSG.mandatory;
  const own = kindOf(node.data)?.testBlocker?.(node.data);
  if (own) return own;
  if (!isTriggerNode(node)) {
    const trigger = apps.find(isTriggerNode);
    if (!trigger || trigger.data.app_status.type !== 'Success' || !konnectId) return MSG.testTriggerFirst(node.data.app_detail.name);
  }
  return null;
}

export function useNodeTest(id: string) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const poll = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(poll.current), []);

  // A custom-script trigger's popup; once it closed the trigger is tested again (quietly, no popup)
  // so the script's request becomes its data.
  const retest = useRef<() => void>(() => undefined);
  const { open: openScript } = useScriptPopup(id, () => retest.current());

  const run = useCallback(
    async (opts: { quiet?: boolean } = {}): Promise<boolean> => {
      const state = store.getState();
      const node = state.apps.find((n) => n.id === id);
      if (!node) return false;
      const blocked = testBlocker(state.apps, state.konnectId, node);
      if (blocked) {
        void toast.error(blocked, TOAST_MS / 1000);
        return false;
      }
      state.patchNode(id, { app_status: { ...node.data.app_status, type: 'Loading' }, response_payload: null });
      let reply: Reply;
      try {
        reply = await testAndReview(buildTestBody(state, state.flowName.trim(), state.konnectId, store.getState().apps.find((n) => n.id === id) ?? node, state.runControl));
      } catch (err) {
        reply = refusal(err);
      }
      const ok = applyReply(store, id, reply);
      if (ok && !opts.quiet) void toast.success(reply.display_message, TOAST_MS / 1000);
      if (ok && !opts.quiet && reply.konnect_custom?.script_id && !openScript(reply.konnect_custom.script_id))
        void toast.warning(POPUP_BLOCKED, TOAST_MS / 1000);
      if (!ok) void toast.error(reply.display_message || MSG.testFailed, TOAST_MS / 1000);
      return ok;
    },
    [store, toast, id, openScript],
  );
  useEffect(() => {
    retest.current = () => void run({ quiet: true });
  }, [run]);

  /** Capture Response: polls every 7 s until the reply is not WAITING. */
  const capture = useCallback(async () => {
    window.clearTimeout(poll.current);
    if (!store.getState().konnectId && !(await run({ quiet: true }))) return;
    const trigger = store.getState().apps.find(isTriggerNode);
    if (!trigger) return;
    const url = trigger.data.app_detail.webhook_url;
    if (url) void navigator.clipboard?.writeText(url).catch(() => undefined);
    const node = store.getState().apps.find((n) => n.id === id);
    store.getState().patchNode(id, { app_status: { ...(node?.data.app_status ?? { type: 'Loading' }), type: 'Loading' }, response_payload: null });
    const tick = async () => {
      const konnectId = store.getState().konnectId;
      if (!konnectId) return;
      try {
        const reply = await captureWebhook(konnectId);
        if (reply.message === 'WAITING') {
          poll.current = window.setTimeout(() => void tick(), WEBHOOK_POLL_MS);
          return;
        }
        if (applyReply(store, trigger.id, reply)) void toast.success(reply.display_message, TOAST_MS / 1000);
        else void toast.error(MSG.webhookMissed, TOAST_MS / 1000);
      } catch (err) {
        applyReply(store, trigger.id, { test_status: 'Error', display_message: errorMessage(err, MSG.webhookMissed), raw_response: {} });
        void toast.error(MSG.webhookMissed, TOAST_MS / 1000);
      }
    };
    await tick();
  }, [store, toast, id, run]);

  return { run, capture };
}
