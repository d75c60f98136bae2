/**
 * /applications: the searchable app catalogue.
 *
 * The search runs on the server from 2 characters ('Search in 1000+ Applications'); the grid
 * loads 80 apps, then 20 more each time its end scrolls into view, and stops above 1000 apps
 * (or when all are loaded) with 'END'. Badges: the caller's account_count when above 0, and
 * 'Beta'. Names longer than 9 characters are cut to 7 plus '...'. An app opens its Manage
 * Accounts drawer. A failed load ends the session and goes to /login.
 */
import { SearchOutlined } from '@ant-design/icons';
import { keepPreviousData } from '@tanstack/react-query';
import { Badge, Card, Empty, Input, Spin, Tag, Tooltip, Typography } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { ManageAccountsDrawer } from '../../accounts';
import type { components } from '../../api/schema';
import { $api } from '../../api/typed';
import { APP_SEARCH_MIN } from '../../lib/constants';
import { sameOriginImage } from '../../lib/appImage';
import { pickerName } from '../../lib/names';
import { clearSession } from '../../lib/session';

export type CatalogueApp = components['schemas']['AppOut'];

export const APPS_FIRST_PAGE = 80;
export const APPS_PAGE_STEP = 20;
export const APPS_MAX = 1000;
export const SEARCH_DEBOUNCE_MS = 300;
export const PLACEHOLDER_IMAGE = '/app-placeholder.svg';

/** The image of an app (its icon served by the api), or the placeholder when image_url is not a path of this origin. */
export function appImage(imageUrl: string | null | undefined): string {
  return sameOriginImage(imageUrl) ?? PLACEHOLDER_IMAGE;
}

/** The next page size after a scroll to the end: +20, or null above 1000 apps. */
export function nextPageSize(pageSize: number): number | null {
  const next = pageSize + APPS_PAGE_STEP;
  return next > APPS_MAX ? null : next;
}

/** The search text sent to the server: only from 2 characters. */
export function serverSearch(text: string): string | undefined {
  const query = text.trim();
  return query.length >= APP_SEARCH_MIN ? query : undefined;
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

function AppCard({ app, onOpen }: { app: CatalogueApp; onOpen: (app: CatalogueApp) => void }) {
  return (
    <Card
      hoverable
      size="small"
      className="kz-app-card"
      data-testid={`app-card-${app.id}`}
      onClick={() => onOpen(app)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') onOpen(app);
      }}
      tabIndex={0}
      role="button"
      aria-label={app.name}
      style={{ textAlign: 'center', position: 'relative' }}
    >
      <Badge count={app.account_count} size="small" title={`${app.account_count} accounts`} data-testid="app-account-count">
        <img
          src={appImage(app.image_url)}
          alt=""
          width={48}
          height={48}
          style={{ objectFit: 'contain', borderRadius: 8 }}
          onError={(e) => {
            if (!e.currentTarget.src.endsWith(PLACEHOLDER_IMAGE)) e.currentTarget.src = PLACEHOLDER_IMAGE;
          }}
        />
      </Badge>
      <Tooltip title={app.name.length > 9 ? app.name : undefined}>
        <div className="kz-app-card-name" style={{ marginTop: 8, whiteSpace: 'nowrap' }}>
          {pickerName(app.name)}
        </div>
      </Tooltip>
      {app.status === 'Beta' ? (
        <Tag color="purple" style={{ position: 'absolute', top: 4, right: 0, marginInlineEnd: 4 }}>
          Beta
        </Tag>
      ) : null}
    </Card>
  );
}

export function ApplicationsPage() {
  const navigate = useNavigate();
  const [text, setText] = useState('');
  const search = useDebounced(serverSearch(text), SEARCH_DEBOUNCE_MS);
  const [paging, setPaging] = useState({ search, pageSize: APPS_FIRST_PAGE });
  // a new search starts again at 80 (state adjusted while rendering)
  if (paging.search !== search) setPaging({ search, pageSize: APPS_FIRST_PAGE });
  const pageSize = paging.search === search ? paging.pageSize : APPS_FIRST_PAGE;
  const [selected, setSelected] = useState<CatalogueApp | null>(null);
  const sentinel = useRef<HTMLDivElement>(null);

  const apps = $api.useQuery(
    'get',
    '/api/v1/apps',
    { params: { query: { page_size: pageSize, page_index: 1, ...(search ? { search_query: search } : {}) } } },
    { placeholderData: keepPreviousData },
  );

  useEffect(() => {
    if (apps.isError) {
      clearSession();
      navigate('/login', { replace: true });
    }
  }, [apps.isError, navigate]);

  const list = apps.data?.apps ?? [];
  const total = apps.data?.total_apps ?? 0;
  const loaded = apps.isSuccess && !apps.isPlaceholderData;
  const allLoaded = loaded && list.length >= total;
  const atLimit = nextPageSize(pageSize) === null;
  const ended = loaded && (allLoaded || atLimit);
  const canGrow = loaded && !ended;

  useEffect(() => {
    const node = sentinel.current;
    if (!node || !canGrow || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        setPaging((p) => ({ ...p, pageSize: nextPageSize(p.pageSize) ?? p.pageSize }));
      }
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [canGrow, pageSize]);

  return (
    <div className="kz-page kz-applications" data-testid="applications-page">
      <Input
        allowClear
        size="large"
        prefix={<SearchOutlined />}
        placeholder="Search in 1000+ Applications"
        value={text}
        onChange={(e) => setText(e.target.value)}
        maxLength={100}
        data-testid="applications-search"
        style={{ maxWidth: 480, marginBottom: 24 }}
      />
      {apps.isPending ? (
        <Spin size="large" data-testid="applications-loading" />
      ) : list.length === 0 && loaded ? (
        <Empty description="No Application Found" />
      ) : (
        <div
          className="kz-app-grid"
          data-testid="applications-grid"
          style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(112px, 1fr))', gap: 16 }}
        >
          {list.map((app) => (
            <AppCard key={app.id} app={app} onOpen={setSelected} />
          ))}
        </div>
      )}
      <div ref={sentinel} data-testid="applications-sentinel" style={{ height: 1 }} />
      {apps.isFetching && !apps.isPending ? <Spin style={{ display: 'block', margin: 16 }} /> : null}
      {ended && list.length > 0 ? (
        <Typography.Paragraph type="secondary" strong data-testid="applications-end" style={{ textAlign: 'center', margin: 24 }}>
          END
        </Typography.Paragraph>
      ) : null}
      {selected ? (
        <ManageAccountsDrawer app={selected} open onClose={() => setSelected(null)} />
      ) : null}
    </div>
  );
}
