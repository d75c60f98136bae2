import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { APP_SEARCH_MIN } from '../../lib/constants';
import { listApps, type AppListing } from '../api/editorApi';
import { PICKER_FIRST_PAGE, PICKER_MAX, PICKER_PAGE_STEP } from '../model/rules';

/** The next page size of the picker: 80, then +20 per scroll, never above 1000. */
export function nextPageSize(current: number, total: number): number {
  if (current >= total || current >= PICKER_MAX) return current;
  return Math.min(current + PICKER_PAGE_STEP, PICKER_MAX);
}

/** The search sent to the server: only from 2 characters. */
export function serverSearch(text: string): string {
  const q = text.trim();
  return q.length >= APP_SEARCH_MIN ? q : '';
}

/**
 * One listing of the catalogue searched on the server: 80 apps at first, 20 more each time the
 * grid is scrolled to its end, up to 1000. `listings` are concatenated (actions after add-ons).
 */
export function useAppSearch(listings: AppListing[], enabled: boolean) {
  const [text, setText] = useState('');
  const [debounced, setDebounced] = useState('');
  const [pageSize, setPageSize] = useState(PICKER_FIRST_PAGE);
  useEffect(() => {
    const t = window.setTimeout(() => {
      setDebounced(serverSearch(text));
      setPageSize(PICKER_FIRST_PAGE);
    }, 250);
    return () => window.clearTimeout(t);
  }, [text]);
  const query = useQuery({
    queryKey: ['editor-apps', listings, debounced, pageSize],
    queryFn: async () => {
      const pages = await Promise.all(listings.map((l) => listApps(l, debounced, pageSize)));
      return {
        apps: pages.flatMap((p) => p.apps),
        total: pages.reduce((acc, p) => acc + p.total_apps, 0),
      };
    },
    enabled,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
  const total = query.data?.total ?? 0;
  const loadMore = () => {
    if (query.isFetching) return;
    const shown = query.data?.apps.length ?? 0;
    if (shown < total) setPageSize((p) => nextPageSize(p, total));
  };
  return { text, setText, apps: query.data?.apps ?? null, total, loadMore, fetching: query.isFetching, pageSize };
}
