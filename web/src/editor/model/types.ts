/**
 * The editor document: what is saved as `canvas_json` and compiled by the api.
 * Node and link shapes follow the canvas spec; React Flow renders them directly.
 *
 * Every part of the document the api models is a type derived from the generated OpenAPI types
 * (`components['schemas']`, web/src/api/schema.d.ts, `make gen-types`): the api's type with the
 * fields the editor always sets made required or narrowed, and the fields only the editor reads
 * added (`Narrow`; the api's models keep keys they do not know). So the editor's canvas is the api's
 * canvas: useSaveFlow sends it without a cast, canvasContract.ts checks each part, and a field
 * the api changes fails `npm run typecheck`. The shapes the api does not model are listed in
 * types.test.ts's `EDITOR_ONLY`, which fails on a hand-written canvas type outside that list.
 */
import type { Node } from '@xyflow/react';
import type { components } from '../../api/schema';

type Schemas = components['schemas'];

/**
 * `Api` with `Editor`'s fields in place of its own. The api's other fields and its index signature
 * stay (a key-remapped mapped type keeps both, where `Omit` would drop the fields).
 */
export type Narrow<Api, Editor> = { [K in keyof Api as K extends keyof Editor ? never : K]: Api[K] } & Editor;
/** `Api` with `Keys` required (fields the api defaults, the editor always writes). */
type Sure<Api, Keys extends keyof Api> = Narrow<Api, Required<Pick<Api, Keys>>>;

/** The api's canvas and one of its node types (one per `type`). */
export type ApiCanvas = Schemas['Canvas'];
export type ApiNode = ApiCanvas['apps'][number];
export type ApiNodeOf<T extends string> = Extract<ApiNode, { type: T }>;

/**
 * The node types of the spec (the api's canvas model accepts exactly `ApiNode['type']`: WebhookInner,
 * ActionNode, TriggerNode, Formatter, InHouse, Generator, Filter, Api, Scheduler, FormInput, Coupon,
 * router, join). Each kind folder adds the one it renders with (several kinds may share one, as InHouse):
 *
 *     declare module '../../model/types' { interface NodeKindMap { Coupon: true } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface NodeKindMap {}

export type NodeKind = keyof NodeKindMap;

export type AppStatusType = 'Loading' | 'Success' | 'Error' | 'Draft' | 'idle';

/** The node's app: the api's AppDetail, with the editor's image, auth type and webhook URL and instructions. */
export type AppDetail = Narrow<
  Sure<Schemas['AppDetail'], 'name' | 'app_type' | 'provider'>,
  {
    id: number;
    app_index: number;
    side: 'left' | 'right';
    image_url: string | null;
    auth_type: string | null;
    webhook_url?: string | null;
    webhook_instructions?: string[];
  }
>;

export type SelectedEvent = Narrow<NonNullable<Schemas['NodeData']['selectedEvent']>, { id: string; name: string }>;

export type SelectedAccount = {
  id: number;
  name: string;
};

/** API Call headers and params: the value is stored encrypted and read back as the mask (model/secrets.ts). */
export type KeyValue = Narrow<Schemas['KeyEntry'], { key: string; value: string; secret?: boolean }>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type ApiDetails = Narrow<
  Schemas['ApiDetails'],
  { method: HttpMethod; endpointURL: string; headers: KeyValue[]; params: KeyValue[]; body: KeyValue[] }
>;

export type ApiSelectedValue = Narrow<
  Schemas['SelectedValue'],
  { wrap_in_array: 'NO' | 'YES'; payload_type: 'JSON'; apiDetails: ApiDetails }
>;

export type ScheduleType = 'Once' | 'Everyday' | 'DaysOfTheWeek' | 'DaysOfTheMonth' | 'AtRegularIntervals';
export type TimeSpan = 'Minutes' | 'Hours' | 'Days' | 'Weeks';

/** The Scheduler trigger's selectedValue (sent as left_config; the api's canvas types selectedValue as the API Call's). */
export type ScheduleValue = {
  schedule_type: ScheduleType;
  schedule_time?: string;
  days?: string[];
  dates?: number[];
  every?: number | string;
  time_span?: TimeSpan;
};

export type OptionEntry = {
  id: string;
  name: string;
};

/** One configuration field of a node (or an output value of its test, when `additional`). */
export type ConfigResponse = Narrow<
  Sure<Schemas['ConfigResponse'], 'label' | 'config_key'>,
  {
    key_value_type?: string;
    type?: 'text' | 'select';
    visible?: boolean;
    additional?: boolean;
    sequence?: number;
    options?: OptionEntry[];
    dynamic?: boolean;
    depends_on?: string[];
    checked?: boolean;
    targetLinked?: boolean;
    /** What to enter: the field's help (a catalogue field's, or an MCP tool argument's description). */
    help?: string;
    /** Listed live once the last sequenced field was chosen (fetch-fields): replaced when that choice changes. */
    fetched?: boolean;
  }
>;

export type ResponsePayload = {
  display_message: string;
  raw_response: unknown;
  konnect_activity_id: number | null;
  konnect_id: number | null;
  test_status: string;
  pass_through_condition?: boolean | null;
  /** Custom-script triggers: the script the user installs (its script-triggers page). */
  konnect_custom?: { script_id: number } | null;
};

export type FilterCondition = Narrow<
  Schemas['FilterCondition'],
  {
    id: string;
    /** A reference such as {{node-1.total}} (or plain text). */
    field: string;
    operator: string;
    valueOfFilter: string;
    /** The join recorded on this condition for the next one (+And / +OR). */
    joinWith: '' | 'AND' | 'OR';
  }
>;

/** A step's error policy as its card's On Error drawer saves it (the api's CanvasOnError). */
export type OnErrorSettings = Required<Schemas['CanvasOnError']>;
export type RetryOn = OnErrorSettings['retryOn'][number];

/** Delay / timer of the spec: ids of types and units (the api's canvas keeps it untyped). */
export type TimerConfig = {
  delay_type: number | null;
  delay_unit: number | null;
  delay_value: string;
  value: string;
};

export type FormField = {
  key: string;
  label: string;
  type: 'text' | 'textarea' | 'email' | 'number' | 'date' | 'select' | 'checkbox';
  required: boolean;
};

export type AppStatus = {
  type: AppStatusType;
  errorMessage?: string;
  collapseEventAccount?: boolean;
  collapseConfiguration?: boolean;
  showResponse?: boolean;
  hasTimer?: boolean;
  hasSequence?: boolean;
};

/**
 * The fields every node has, whatever its kind: the api's NodeData, narrowed, with the editor's own.
 * The stored canvas JSON keeps these names (the api and saved drafts read them).
 */
export type BaseNodeData = Narrow<
  Sure<Schemas['NodeData'], 'node_id'>,
  {
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
>;

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
export type KindData<P extends keyof KindDataMap> = Narrow<BaseNodeData, KindDataMap[P]>;

type KindShape = KindDataMap[keyof KindDataMap];
type KeysOf<T> = T extends unknown ? keyof T : never;
type FieldOf<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? Exclude<T[K], undefined> : never) : never;
/** Every kind's own fields, optional (a field two kinds share, such as selectedValue, is the union of their types). */
export type KindFields = { [K in KeysOf<KindShape>]?: FieldOf<KindShape, K> };

/**
 * The data of any node, as the generic editor (store, operations, canvas JSON) handles it: the
 * shared fields and every kind's own fields. A kind's code narrows it to `KindData<'provider'>`.
 */
export type FlowNodeData = Narrow<BaseNodeData, KindFields>;

export type FlowNode = Node<FlowNodeData, NodeKind>;

/** A link: the api's, with React Flow's edge id (the api keeps it, the compiler reads source and target). */
export type FlowLink = Narrow<Schemas['Link'], { id: string; sourceHandle: string | null; targetHandle: string | null }>;

/** The part of the editor state that undo/redo tracks. */
export type Flow = {
  apps: FlowNode[];
  links: FlowLink[];
};

/** A node as saved: the api's node of its type, with only the document fields (none of React Flow's runtime ones). */
export type SavedNode = {
  [T in NodeKind]: Narrow<ApiNodeOf<T>, { type: T; position: { x: number; y: number }; data: FlowNodeData }>;
}[NodeKind];

/** The saved document: the api's Canvas, with the editor's nodes, links, Run settings and `dataForSelect` (the mark of a loadable canvas). */
export type CanvasJson = Narrow<
  ApiCanvas,
  {
    apps: SavedNode[];
    links: FlowLink[];
    dataForSelect: Record<string, unknown>;
    flowName: string;
    /** The flow's Run settings (docs/run-control.md); absent: none. */
    runControl?: RunControlSettings | null;
  }
>;

/** What happens when a run fails: an e-mail to the owner and/or a run of another of their flows. */
export type RunAlertSettings = Sure<Schemas['CanvasAlert'], 'email' | 'runKonnectId' | 'digestMinutes'>;

/** The Run settings dialog's values as saved in canvas_json.runControl (compiled into FlowSpec.run_control). */
export type RunControlSettings = Narrow<
  Sure<Schemas['CanvasRunControl'], 'deadlineSeconds' | 'maxConcurrency'>,
  { alert: RunAlertSettings | null }
>;
