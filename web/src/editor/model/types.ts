/**
 * The editor document: what is saved as `canvas_json` and compiled by the api.
 * Node and link shapes follow the canvas spec; React Flow renders them directly.
 */
import type { Node } from '@xyflow/react';

export type NodeKind = 'WebhookInner' | 'Api' | 'ActionNode' | 'TriggerNode';

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
}

export interface SelectedEvent {
  id: string;
  name: string;
}

export interface KeyValue {
  key: string;
  value: string;
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

/** One output value of a node that later nodes can reference. */
export interface ConfigResponse {
  label: string;
  config_key: string;
  value?: unknown;
  [extra: string]: unknown;
}

export interface FlowNodeData extends Record<string, unknown> {
  node_id: string;
  app_detail: AppDetail;
  selectedEvent: SelectedEvent | null;
  app_status: { type: AppStatusType; errorMessage?: string };
  configResponses?: ConfigResponse[];
  selectedValue?: ApiSelectedValue;
}

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
}
