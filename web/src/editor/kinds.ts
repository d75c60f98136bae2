/**
 * One kind = one definition. Every step kind of the editor (an add-on such as the coupon, the
 * webhook trigger, a catalogue app's trigger or action) is one folder under nodes/ whose
 * `kind.ts(x)` default-exports a `KindDefinition` (data and rules, no component) and whose
 * `index.ts(x)` default-exports its card; nodes/registry.ts collects the definitions and
 * nodes/nodeTypes.tsx the cards. The generic editor (node types, operations, test rules, the test
 * request, the add-action grid) asks the registry and never switches on provider strings. See
 * nodes/README.md.
 *
 * This file holds types only (no runtime imports), so kind folders can import it freely.
 */
import type { ReactNode } from 'react';
import type { FlowLink, FlowNode, FlowNodeData, KindDataMap, KindData, NodeKind, SelectedEvent } from './model/types';

/** The data a kind's hooks see: its own shape (KindDataMap[P]) over the shared fields. */
export type DataOf<P> = P extends keyof KindDataMap ? KindData<P> : FlowNodeData;

/**
 * A step kind. `P` is its key in KindDataMap (the provider whose data shape it declares), so its
 * hooks get its own typed data (`KindData<P>`); kinds without data of their own leave it out
 * (their hooks see `FlowNodeData`).
 *
 * Hooks are declared as methods (not arrow-typed properties) so a definition typed for its own
 * data is still a `KindDefinition` in the registry's list.
 */
export interface KindDefinition<P = undefined> {
  /** The folder name; unique. */
  kind: string;
  /** The app providers this kind handles: adding one of these apps creates this kind's node. */
  providers: readonly string[];
  /** Providers of older drafts or api aliases this kind also shows, never created as it. */
  legacyProviders?: readonly string[];
  /**
   * The catalogue app general case: the kind of any app no definition names by provider, as the
   * trigger (first step) or as an action. Exactly one definition has each.
   */
  general?: 'trigger' | 'action';
  /** The node `type` saved in canvas_json (the api's canvas model accepts exactly NodeKind). */
  nodeType: NodeKind;
  /** How the add-on presents itself: name, description and the icon shown while (or instead of) its image. */
  label: { name: string; description: string; icon?: ReactNode };
  /** The single event of an add-on: chosen when the node is added. */
  fixedEvent?: SelectedEvent;
  /** Extra app_detail fields of a new node (the webhook's `webhook_url: null`). */
  appDetail?: Record<string, unknown>;
  /** Only starts flows: not offered (nor added) as an action. */
  triggerOnly?: boolean;
  /** Used at most once in a flow: the refusal when it is added (and the tile's tooltip) again. */
  onceMessage?: string;
  /** false: the card has no Set Delay (the delay add-on itself). */
  timer?: boolean;
  /** false: the card never asks the api for its event's configuration fields. */
  configFetch?: boolean;
  /** false: the card never asks the api for a field's options (nor the fields after a sequenced choice). */
  optionsFetch?: boolean;
  /** false: as the trigger its Test & Review opens no test drawer (sample filter). */
  testDrawer?: boolean;
  /** The kind's own data of a new node (merged over the shared defaults). */
  initialData?(): Partial<DataOf<P>>;
  /** Why the node cannot be tested (checked after the mandatory fields, before the trigger-first rule), or null. */
  testBlocker?(data: DataOf<P>): string | null;
  /** As the trigger: the left_config of its test request (default: its configuration fields' values). */
  triggerConfig?(data: DataOf<P>): Record<string, unknown>;
  /** What the card does, in words, beside its name (default: the chosen event's name). */
  summary?(data: DataOf<P>): string | null;
  /** The part of its test response later steps reference (the iterator: one item). */
  outputs?(raw: unknown): unknown;
  /**
   * Output keys derived from the flow when the node was not tested (the join: each path's last
   * step's keys under the path's name); `keysOf` gives another node's keys.
   */
  outputKeysIn?(node: FlowNode, flow: { apps: FlowNode[]; links: FlowLink[] }, keysOf: (node: FlowNode) => string[]): string[];
}
