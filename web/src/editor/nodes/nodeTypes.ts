import type { NodeTypes } from '@xyflow/react';
import type { NodeKind } from '../model/types';
import { ActionNode } from './action/ActionNode';
import { ApiNode } from './api/ApiNode';
import { CouponNode } from './coupon/CouponNode';
import { FilterNode } from './filter/FilterNode';
import { FormInputNode } from './formInput/FormInputNode';
import { FormatterNode } from './formatter/FormatterNode';
import { GeneratorNode } from './generator/GeneratorNode';
import { InHouseNode } from './inhouse/InHouseNode';
import { SchedulerNode } from './scheduler/SchedulerNode';
import { TriggerNode } from './trigger/TriggerNode';
import { WebhookNode } from './webhook/WebhookNode';

/** Registered once at module scope so React Flow never sees a new object. */
export const nodeTypes = {
  WebhookInner: WebhookNode,
  ActionNode,
  TriggerNode,
  Formatter: FormatterNode,
  InHouse: InHouseNode,
  Generator: GeneratorNode,
  Filter: FilterNode,
  Api: ApiNode,
  Scheduler: SchedulerNode,
  FormInput: FormInputNode,
  Coupon: CouponNode,
} satisfies Record<NodeKind, unknown> as NodeTypes;
