/**
 * The React Flow node types, built from the kind folders (one folder per kind under nodes/): every
 * `nodes/<kind>/index.ts(x)` default-exports the kind's card, found here by Vite's glob and matched
 * to its definition (`kind.ts(x)`, in the registry) by folder name. Only the canvas
 * (EditorCanvas.tsx) imports this module: the cards import the registry, the store and the
 * operations, which never import the cards back.
 */
import type { NodeProps, NodeTypes } from '@xyflow/react';
import { memo, type ComponentType } from 'react';
import type { KindDefinition } from '../kinds';
import type { FlowNode, NodeKind } from '../model/types';
import { NodeCard } from './card/NodeCard';
import { kindOf, kinds } from './registry';

type KindCard = ComponentType<NodeProps<FlowNode>>;

const modules = import.meta.glob<{ default: KindCard }>('./*/index.{ts,tsx}', { eager: true });

/** Each kind folder's card, by folder name (= the definition's `kind`). */
export const kindCards: ReadonlyMap<string, KindCard> = new Map(
  Object.keys(modules)
    .sort()
    .map((path) => [path.split('/')[1], modules[path].default] as const),
);

/** The card of a node type whose kind folder has no card: the bare NodeCard. */
function BareCard({ id, data, selected }: NodeProps<FlowNode>) {
  return <NodeCard id={id} data={data} selected={selected} />;
}

/**
 * The React Flow node types: one per NodeKind; a node type several kinds share (Api, InHouse)
 * renders the kind of the node's provider (none matching: a bare card).
 */
function buildNodeTypes(): NodeTypes {
  const grouped = new Map<NodeKind, KindDefinition[]>();
  for (const k of kinds) grouped.set(k.nodeType, [...(grouped.get(k.nodeType) ?? []), k]);
  const out: Record<string, KindCard> = {};
  for (const [type, defs] of grouped) {
    if (defs.length === 1) {
      out[type] = kindCards.get(defs[0].kind) ?? BareCard;
      continue;
    }
    const cardsOfType: Partial<Record<string, KindCard>> = Object.fromEntries(defs.map((d) => [d.kind, kindCards.get(d.kind)]));
    const Shared = ({ ...props }: NodeProps<FlowNode>) => {
      const k = kindOf(props.data);
      const Card = k && defs.includes(k) ? cardsOfType[k.kind] : null;
      return Card ? <Card {...props} /> : <NodeCard id={props.id} data={props.data} selected={props.selected} />;
    };
    Shared.displayName = `${type}Node`;
    out[type] = memo(Shared);
  }
  return out as NodeTypes;
}

/** Registered once at module scope so React Flow never sees a new object. */
export const nodeTypes: NodeTypes = buildNodeTypes();
