/**
 * The editor's canvas against the api's. The OpenAPI document describes `canvas_json` from the
 * contracts' canvas model (`konnectz_contracts.canvas`), generated into `schema.d.ts`; the editor's
 * document types are derived from those (types.ts), and the save, test and delete requests send the
 * canvas without a cast. These type-level checks name each part, so a change on either side that
 * makes what the editor saves no longer fit what the api reads fails `npm run typecheck` (and so
 * `make test`) at the part concerned. The api keeps keys it does not know (its models allow extra
 * keys, the generated types' index signatures): the editor's own fields pass as those.
 */
import type { components } from '../../api/schema';
import type {
  ApiCanvas,
  ApiNode,
  ApiNodeOf,
  AppDetail,
  CanvasJson,
  FlowLink,
  FlowNodeData,
  NodeKind,
  RunControlSettings,
  SavedNode,
} from './types';

type Schemas = components['schemas'];
type Fits<From, To> = [From] extends [To] ? true : false;
function fits<T extends true>(): T | undefined {
  return undefined;
}

// The document, each node (any type), and its data as each node type's model reads it.
fits<Fits<CanvasJson, ApiCanvas>>();
fits<Fits<SavedNode, ApiNode>>();
fits<Fits<NodeKind, ApiNode['type']>>();
fits<Fits<FlowNodeData, NonNullable<ApiNodeOf<'ActionNode'>['data']>>>();
fits<Fits<FlowNodeData, NonNullable<ApiNodeOf<'router'>['data']>>>();
fits<Fits<FlowNodeData, NonNullable<ApiNodeOf<'join'>['data']>>>();
// The node's app, the links, and the flow's Run settings (canvas_json.runControl).
fits<Fits<AppDetail, Schemas['AppDetail']>>();
fits<Fits<FlowLink, Schemas['Link']>>();
fits<Fits<RunControlSettings, Schemas['CanvasRunControl']>>();
