import { MergeCellsOutlined } from '@ant-design/icons';
import type { KindDefinition } from '../../kinds';
import { pathNodes, routerOfJoin, routerPaths, type JoinWait } from '../../model/paths';

export interface JoinData {
  /** all: goes on once every chosen path reached it; any: once at least one did. */
  joinWait?: JoinWait;
}

export const WAIT_LABELS: Record<JoinWait, string> = {
  all: 'Wait for all paths',
  any: 'Go on after any path',
};

/** The join add-on: where a router's paths meet; its output holds each path's last output under the path's name. */
const join: KindDefinition<'join'> = {
  kind: 'join',
  providers: ['join'],
  nodeType: 'join',
  label: { name: 'Join', description: "Where a router's paths meet again.", icon: <MergeCellsOutlined /> },
  fixedEvent: { id: 'join_paths', name: 'Join Paths' },
  timer: false,
  configFetch: false,
  optionsFetch: false,
  initialData: () => ({ joinWait: 'all' }),
  summary: (data) => WAIT_LABELS[data.joinWait ?? 'all'],
  // Untested: each path's last step's outputs, under the path's name ({{join.<path>.<field>}}).
  outputKeysIn: (node, flow, keysOf) => {
    const router = routerOfJoin(flow, node.id);
    if (!router) return [];
    return routerPaths(router).flatMap((p) => {
      const steps = pathNodes(flow, router.id, p.id);
      const last = steps[steps.length - 1];
      return last ? keysOf(last).map((k) => `${p.name}.${k}`) : [];
    });
  },
};

export default join;

declare module '../../model/types' {
  interface NodeKindMap {
    join: true;
  }
  interface KindDataMap {
    join: JoinData;
  }
}
