import { useEffect, useState } from 'react';
import { konnectsApi } from '../../api/endpoints';
import type { KonnectListItem, KonnectListQuery } from '../../api/types';

export interface KonnectsResult {
  konnects: KonnectListItem[];
  total: number;
  loading: boolean;
  failed: boolean;
}

/** Loads GET /api/v1/konnects for `query`; refetches when the query changes or `reload` grows. */
export function useKonnects(query: KonnectListQuery, reload = 0): KonnectsResult {
  const key = JSON.stringify([query, reload]);
  const [state, setState] = useState<{ key: string; konnects: KonnectListItem[]; total: number; failed: boolean } | null>(
    null,
  );

  useEffect(() => {
    let live = true;
    const q: KonnectListQuery = JSON.parse(key)[0];
    konnectsApi
      .list(q)
      .then((res) => live && setState({ key, konnects: res.konnects ?? [], total: res.total_konnects ?? 0, failed: false }))
      .catch(() => live && setState((prev) => ({ key, konnects: prev?.konnects ?? [], total: prev?.total ?? 0, failed: true })));
    return () => {
      live = false;
    };
  }, [key]);

  return {
    konnects: state?.konnects ?? [],
    total: state?.total ?? 0,
    loading: !state || state.key !== key,
    failed: Boolean(state?.failed),
  };
}
