/**
 * The kind registry: every `nodes/<kind>/kind.ts(x)` default-exports a KindDefinition (../kinds.ts)
 * and is found here by Vite's glob, so adding a kind is adding its folder. The generic editor asks
 * these functions instead of switching on provider strings.
 *
 * Only the definitions (data and rules) are globbed here, never the cards: the cards, the store and
 * the operations import these lookups, so importing a card from here would be an import cycle. The
 * cards are collected by nodeTypes.tsx, which only the canvas (EditorCanvas.tsx) imports.
 */
import type { ReactNode } from 'react';
import type { KindDefinition } from '../kinds';
import type { FlowNode, FlowNodeData, NodeKind } from '../model/types';

const modules = import.meta.glob<{ default: KindDefinition }>('./*/kind.{ts,tsx}', { eager: true });

/** Every kind, by folder name (the order is the folders'). */
export const kinds: readonly KindDefinition[] = Object.keys(modules)
  .sort()
  .map((path) => modules[path].default);

/** The folder of each definition, for the registry's own test. */
export const kindFolders: readonly string[] = Object.keys(modules)
  .sort()
  .map((path) => path.split('/')[1]);

const byProvider = new Map<string, KindDefinition>();
const byLegacyProvider = new Map<string, KindDefinition>();
for (const k of kinds) {
  for (const p of k.providers) byProvider.set(p, k);
  for (const p of k.legacyProviders ?? []) byLegacyProvider.set(p, k);
}
const generalTrigger = kinds.find((k) => k.general === 'trigger');
const generalAction = kinds.find((k) => k.general === 'action');

/** The kind an app becomes when added (the general trigger/action kind for catalogue apps). */
export function kindForApp(provider: string, trigger: boolean): KindDefinition {
  const k = byProvider.get(provider) ?? (trigger ? generalTrigger : generalAction);
  if (!k) throw new Error('no general trigger/action kind registered');
  return k;
}

/** The kind named for a provider (also its legacy/alias providers), or undefined for catalogue apps. */
export function kindOfProvider(provider: string): KindDefinition | undefined {
  return byProvider.get(provider) ?? byLegacyProvider.get(provider);
}

/** The kind of a node on the canvas. */
export function kindOf(data: FlowNodeData): KindDefinition | undefined {
  return kindOfProvider(data.app_detail.provider);
}

/** Which node type renders an app. */
export function nodeKindFor(app: { provider: string }, trigger: boolean): NodeKind {
  return kindForApp(app.provider, trigger).nodeType;
}

/** Set Delay: actions (not the trigger, not a kind without a timer such as the delay add-on) support a timer. */
export function supportsTimer(data: FlowNodeData): boolean {
  return data.app_detail.app_index !== 1 && kindOf(data)?.timer !== false;
}

/** Add-ons that only start flows are not offered as actions. */
export function isTriggerOnly(provider: string): boolean {
  return byProvider.get(provider)?.triggerOnly === true;
}

/** Why this app cannot be added as an action to these nodes (a once-only kind already used), or null. */
export function addRefusal(apps: readonly FlowNode[], provider: string): string | null {
  const k = byProvider.get(provider);
  if (!k?.onceMessage) return null;
  return apps.some((n) => kindOf(n.data) === k) ? k.onceMessage : null;
}

/** The icon of an app while (or instead of) its image: its kind's, or none (AppIcon's default). */
export function kindIcon(provider: string): ReactNode | undefined {
  return kindOfProvider(provider)?.label.icon;
}
