/**
 * The editor document: what is saved as `canvas_json` and compiled by the api.
 * Node and link shapes follow the canvas spec; React Flow renders them directly.
 */
import type { Node } from '@xyflow/react';
import type { components } from '../../api/schema';

/**
 * The node types of the spec (the api's canvas model accepts exactly these: WebhookInner,
 * ActionNode, TriggerNode, Formatter, InHouse, Generator, Filter, Api, Scheduler, FormInput, Coupon).
 * Each kind folder adds the one it renders with (several kinds may share one, as InHouse):
 *
 *     declare module '../../model/types' { interface NodeKindMap { Coupon: true } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface NodeKindMap {}

export type NodeKind = keyof NodeKindMap;

export type AppStatusType = 'Loading' | 'Success' | 'Error' | 'Draft' | 'idle';

export interface AppDetail {
  id: number;
  name: string;
  app_type: string;
  provider: string;
  app_index: number;
  image_url: string | null;
  auth_type: string | null;
  side: 'left' | 'right';
  webhook_url?: string | null;
  webhook_instructions?: string[];
}

export interface SelectedEvent {
  id: string;
  name: string;
}

export interface SelectedAccount {
  id: number;
  name: string;
}

export interface KeyValue {
  key: string;
  value: string;
  /** API Call headers and params: the value is stored encrypted and read back as the mask (model/secrets.ts). */
  secret?: boolean;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiDetails {
  method: HttpMethod;
  endpointURL: string;
  headers: KeyValue[];
  params: KeyValue[];
  body: KeyValue[];
}

export interface ApiSelectedValue {
  wrap_in_array: 'NO' | 'YES';
  payload_type: 'JSON';
  apiDetails: ApiDetails;
}

export type ScheduleType = 'Once' | 'Everyday' | 'DaysOfTheWeek' | 'DaysOfTheMonth' | 'AtRegularIntervals';
export type TimeSpan = 'Minutes' | 'Hours' | 'Days' | 'Weeks';

/** The Scheduler trigger's selectedValue (sent as left_config). */
export interface ScheduleValue {
  schedule_type: ScheduleType;
  schedule_time?: string;
  days?: string[];
  dates?: number[];
  every?: number | string;
  time_span?: TimeSpan;
}

export interface OptionEntry {
  id: string;
  name: string;
}

/** One configuration field of a node (or an output value of its test, when `additional`). */
export interface ConfigResponse {
  label: string;
  config_key: string;
  key_value_type?: string;
  type?: 'text' | 'select';
  visible?: boolean;
  additional?: boolean;
  config_key_required?: boolean;
  sequence?: number;
  value?: unknown;
  options?: OptionEntry[];
  dynamic?: boolean;
  depends_on?: string[];
  checked?: boolean;
  targetLinked?: boolean;
  [extra: string]: unknown;
}

export interface ResponsePayload {
  display_message: string;
  raw_response: unknown;
  konnect_activity_id: number | null;
  konnect_id: number | null;
  test_status: string;
  pass_through_condition?: boolean | null;
  /** Custom-script triggers: the script the user installs (its script-triggers page). */
  konnect_custom?: { script_id: number } | null;
}

export interface FilterCondition {
  id: string;
  /** A reference such as {{node-1.total}} (or plain text). */
  field: string;
  operator: string;
  valueOfFilter: string;
  /** The join recorded on this condition for the next one (+And / +OR). */
  joinWith: '' | 'AND' | 'OR';
}

/** A step's error policy as its card's On Error drawer saves it (the api's CanvasOnError). */
export type OnErrorSettings = Required<components['schemas']['CanvasOnError']>;
export type RetryOn = OnErrorSettings['retryOn'][number];

/** Delay / timer of the spec: ids of types and units. */
export interface TimerConfig {
  delay_type: number | null;
  delay_unit: number | null;
  delay_value: string;
  value: string;
}

export interface FormField {
  key: string;
  label: string;
  type: 'text' | 'textarea' | 'email' | 'number' | 'date' | 'select' | 'checkbox';
  required: boolean;
}

export interface AppStatus {
  type: AppStatusType;
  errorMessage?: string;
  collapseEventAccount?: boolean;
  collapseConfiguration?: boolean;
  showResponse?: boolean;
  hasTimer?: boolean;
  hasSequence?: boolean;
}

/**
 * The fields every node has, whatever its kind. The stored canvas JSON keeps these names (the api
 * and saved drafts read them).
 */
export interface BaseNodeData extends Record<string, unknown> {
  node_id: string;
  app_detail: AppDetail;
  selectedEvent: SelectedEvent | null;
  selectedAccount?: SelectedAccount | null;
  app_status: AppStatus;
  configResponses?: ConfigResponse[];
  /** An add-on's fields (what the api's compilers read): formatter, generator, splitter, iterator... */
  selectedAddonsValue?: Record<string, unknown>;
  /** Set Delay of an action (and the delay add-on's own parameters). */
  timerConfigs?: TimerConfig | null;
  delayReady?: boolean;
  /** What the step does when it fails: retries, continue on error (the On Error drawer). */
  onError?: OnErrorSettings | null;
  response_payload?: ResponsePayload | null;
  /** The event lists more fields live once its last sequenced field is chosen. */
  fetchFieldStatus?: boolean;
  /** The trigger test drawer's choices. */
  testFilter?: { join: 'AND' | 'OR'; labels: string[] };
  /** The trigger flag of a custom-script trigger: its script-triggers popup is open. */
  customScriptOpen?: boolean;
  /** Set on action nodes once the trigger was tested. */
  trigger_konnect_id?: number | null;
}

/**
 * Each kind's own data fields, keyed by its provider: a kind folder adds its entry with
 *
 *     declare module '../../model/types' { interface KindDataMap { coupon: CouponData } }
 *
 * so its shape lives in its folder. A catalogue app's trigger or action (the general case) has
 * only the shared fields.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface KindDataMap {}

/** One kind's node data: the shared fields and its own (the case of the union keyed by provider). */
export type KindData<P extends keyof KindDataMap> = BaseNodeData & KindDataMap[P];

type KindShape = KindDataMap[keyof KindDataMap];
type KeysOf<T> = T extends unknown ? keyof T : never;
type FieldOf<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? Exclude<T[K], undefined> : never) : never;
/** Every kind's own fields, optional (a field two kinds share, such as selectedValue, is the union of their types). */
export type KindFields = { [K in KeysOf<KindShape>]?: FieldOf<KindShape, K> };

/**
 * The data of any node, as the generic editor (store, operations, canvas JSON) handles it: the
 * shared fields and every kind's own fields. A kind's code narrows it to `KindData<'provider'>`.
 */
export type FlowNodeData = BaseNodeData & KindFields;

export type FlowNode = Node<FlowNodeData, NodeKind>;

export interface FlowLink {
  id: string;
  source: string;
  target: string;
  sourceHandle: string | null;
  targetHandle: string | null;
}

/** The part of the editor state that undo/redo tracks. */
export interface Flow {
  apps: FlowNode[];
  links: FlowLink[];
}

/** A node as saved: only the document fields, none of React Flow's runtime ones. */
export interface SavedNode {
  id: string;
  type: NodeKind;
  position: { x: number; y: number };
  data: FlowNodeData;
}

export interface CanvasJson {
  apps: SavedNode[];
  links: FlowLink[];
  dataForSelect: Record<string, unknown>;
  flowName: string;
  /** The flow's Run settings (docs/run-control.md); absent: none. */
  runControl?: RunControlSettings | null;
}

/** What happens when a run fails: an e-mail to the owner and/or a run of another of their flows. */
export interface RunAlertSettings {
  email: boolean;
  runKonnectId: number | null;
  digestMinutes: number | null;
}

/** The Run settings dialog's values as saved in canvas_json.runControl (compiled into FlowSpec.run_control). */
export interface RunControlSettings {
  deadlineSeconds: number | null;
  maxConcurrency: number | null;
  alert: RunAlertSettings | null;
}
