import { useEffect, useState } from 'react';
import { appsApi } from '../api/endpoints';
import type { App } from '../api/types';

/** Loads an app list once while `enabled`; null until it arrives (empty on failure). */
export function useAppList(kind: 'triggers' | 'actions' | 'addOns', enabled: boolean): App[] | null {
  const [apps, setApps] = useState<App[] | null>(null);
  const loaded = apps !== null;
  useEffect(() => {
    if (!enabled || loaded) return;
    let live = true;
    const load =
      kind === 'triggers'
        ? appsApi.triggers().then((r) => r.apps ?? [])
        : kind === 'addOns'
          ? appsApi.addOns().then((r) => r.apps ?? [])
          : Promise.all([appsApi.actions(), appsApi.addOns()]).then(([a, b]) => [...(a.apps ?? []), ...(b.apps ?? [])]);
    load.then((list) => live && setApps(list)).catch(() => live && setApps([]));
    return () => {
      live = false;
    };
  }, [kind, enabled, loaded]);
  return apps;
}
