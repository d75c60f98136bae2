import type { NodeTypes } from '@xyflow/react';
import type { NodeKind } from '../model/types';
import { ApiNode } from './ApiNode';
import { AppNode } from './AppNode';
import { WebhookNode } from './WebhookNode';

/** Registered once at module scope so React Flow never sees a new object. */
export const nodeTypes = {
  WebhookInner: WebhookNode,
  Api: ApiNode,
  ActionNode: AppNode,
  TriggerNode: AppNode,
} satisfies Record<NodeKind, unknown> as NodeTypes;
