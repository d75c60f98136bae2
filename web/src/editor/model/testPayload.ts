/** The Test & Review request of a node (canvas spec §3, Test payload). */
import type { TestBody } from '../api/editorApi';
import { toCanvasJson } from './canvas';
import { kindOf } from '../nodes/registry';
import type { Flow, FlowNode, RunControlSettings } from './types';

/** config_key → value of the node's input fields (selects keep their value). */
export function configValues(node: FlowNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of node.data.configResponses ?? []) {
    if (f.additional || !f.config_key) continue;
    if (f.value !== undefined && f.value !== null && f.value !== '') out[f.config_key] = f.value;
  }
  return out;
}

export function buildTestBody(
  flow: Flow,
  flowName: string,
  konnectId: number | null,
  node: FlowNode,
  runControl?: RunControlSettings | null,
): TestBody {
  const d = node.data;
  // The api stores the document a test sends: it keeps the flow's Run settings.
  const canvas_json = toCanvasJson(flow, flowName, runControl);
  const base = {
    node_id: node.id,
    konnect_id: konnectId,
    canvas_json,
    app_account_id: d.selectedAccount?.id ?? null,
  };
  if (d.app_detail.app_index === 1) {
    // A kind may send its own left_config (the Scheduler: its selectedValue), else the configuration's values.
    const own = kindOf(d)?.triggerConfig;
    const left_config = own ? own(d) : configValues(node);
    // The test drawer's AND/OR (default AND) and labels: which sample the test may answer.
    const trigger_filter = { join: d.testFilter?.join ?? 'AND', labels: [...(d.testFilter?.labels ?? [])] };
    return { ...base, left_app_id: d.app_detail.id, left_app_event_id: d.selectedEvent?.id ?? null, left_config, trigger_filter };
  }
  return {
    ...base,
    konnect_activity_id: d.response_payload?.konnect_activity_id ?? null,
    app_id: d.app_detail.id,
    app_event_id: d.selectedEvent?.id ?? null,
    config: configValues(node),
    provider: d.app_detail.provider,
    delay_config: d.timerConfigs ? { ...d.timerConfigs } : null,
  };
}
