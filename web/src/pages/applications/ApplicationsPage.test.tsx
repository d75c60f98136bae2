import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { readSession, writeSession } from '../../lib/session';
import { type FetchCall, mockFetch, renderRoutes } from '../../test/utils';
import { ApplicationsPage, appImage, nextPageSize, PLACEHOLDER_IMAGE, serverSearch } from './ApplicationsPage';

/** A catalogue of `size` apps; every 10th is Beta, app 3 has two accounts, odd ids have an external image (never loaded). */
function catalogue(size: number) {
  return Array.from({ length: size }, (_, i) => ({
    id: i + 1,
    name: i === 0 ? 'Google Sheets' : `App ${i + 1}`,
    image_url: i % 2 ? `/api/v1/apps/${i + 1}/icon` : 'https://logos.test/app.png',
    status: (i + 1) % 10 === 0 ? 'Beta' : 'Active',
    account_count: i === 2 ? 2 : 0,
    provider: `app${i + 1}`,
    app_type: 'api',
    auth_type: 'Token',
    categories: [],
  }));
}

function fakeApi(size: number, opts: { fail?: boolean } = {}) {
  const all = catalogue(size);
  return mockFetch((c: FetchCall) => {
    const url = new URL(c.url, 'http://x');
    if (url.pathname === '/api/v1/apps') {
      if (opts.fail) return { status: 500, body: { message: 'down' } };
      const q = url.searchParams.get('search_query')?.toLowerCase();
      const hits = q ? all.filter((a) => a.name.toLowerCase().includes(q)) : all;
      const n = Number(url.searchParams.get('page_size'));
      return { body: { apps: hits.slice(0, n), total_apps: hits.length } };
    }
    if (/\/authorized_app_accounts$/.test(url.pathname)) return { body: { authorized_app_accounts: [] } };
    return undefined;
  });
}

/** IntersectionObserver stub: `scrollToEnd()` reports the sentinel as visible. */
let observers: { cb: IntersectionObserverCallback; observing: boolean }[] = [];
function scrollToEnd() {
  act(() => {
    for (const o of observers.filter((x) => x.observing))
      o.cb([{ isIntersecting: true } as IntersectionObserverEntry], {} as IntersectionObserver);
  });
}

const pageSizes = (calls: FetchCall[]) =>
  calls.filter((c) => c.url.startsWith('/api/v1/apps?')).map((c) => new URL(c.url, 'http://x').searchParams.get('page_size'));

const renderPage = () =>
  renderRoutes(
    [
      { path: '/applications', element: <ApplicationsPage /> },
      { path: '/login', element: <div data-testid="login" /> },
    ],
    '/applications',
  );

describe('ApplicationsPage', () => {
  beforeEach(() => {
    queryClient.clear();
    observers = [];
    vi.stubGlobal(
      'IntersectionObserver',
      class {
        entry: { cb: IntersectionObserverCallback; observing: boolean };
        constructor(cb: IntersectionObserverCallback) {
          this.entry = { cb, observing: false };
          observers.push(this.entry);
        }
        observe() {
          this.entry.observing = true;
        }
        disconnect() {
          this.entry.observing = false;
        }
        unobserve() {}
      },
    );
  });
  afterEach(() => vi.unstubAllGlobals());

  it('shows 80 apps with badges, cut names and placeholder images, then +20 per scroll', async () => {
    const calls = fakeApi(130);
    renderPage();
    expect(screen.getByPlaceholderText('Search in 1000+ Applications')).toBeInTheDocument();
    await screen.findByTestId('app-card-80');
    expect(screen.queryByTestId('app-card-81')).not.toBeInTheDocument();
    const sheets = screen.getByTestId('app-card-1');
    expect(within(sheets).getByText('Google ...')).toBeInTheDocument();
    expect(sheets.querySelector('img')?.getAttribute('src')).toBe(PLACEHOLDER_IMAGE);
    expect(screen.getByTestId('app-card-2').querySelector('img')?.getAttribute('src')).toBe('/api/v1/apps/2/icon');
    // no tile asks a third-party host
    const hosts = [...document.querySelectorAll('img')].map((img) => new URL(img.getAttribute('src') ?? '', window.location.href).host);
    expect(hosts.length).toBeGreaterThan(0);
    expect(new Set(hosts)).toEqual(new Set([window.location.host]));
    expect(within(screen.getByTestId('app-card-3')).getByText('2')).toBeInTheDocument();
    expect(within(screen.getByTestId('app-card-4')).queryByText('0')).not.toBeInTheDocument();
    expect(within(screen.getByTestId('app-card-10')).getByText('Beta')).toBeInTheDocument();
    expect(within(screen.getByTestId('app-card-11')).queryByText('Beta')).not.toBeInTheDocument();
    expect(screen.queryByText('END')).not.toBeInTheDocument();

    scrollToEnd();
    await screen.findByTestId('app-card-100');
    scrollToEnd();
    await screen.findByTestId('app-card-120');
    scrollToEnd();
    await screen.findByTestId('app-card-130');
    expect(await screen.findByText('END')).toBeInTheDocument();
    expect(pageSizes(calls)).toEqual(['80', '100', '120', '140']);
  });

  it('grows by 20 up to 1000 and then stops', () => {
    expect(nextPageSize(80)).toBe(100);
    expect(nextPageSize(980)).toBe(1000);
    expect(nextPageSize(1000)).toBeNull();
    let size = 80;
    let steps = 0;
    for (let next = nextPageSize(size); next !== null; next = nextPageSize(size)) {
      size = next;
      steps += 1;
    }
    expect([size, steps]).toEqual([1000, 46]);
  });

  it('searches on the server from 2 characters and starts again at 80', async () => {
    const calls = fakeApi(300);
    renderPage();
    await screen.findByTestId('app-card-80');
    scrollToEnd();
    await screen.findByTestId('app-card-100');
    const box = screen.getByTestId('applications-search');
    fireEvent.change(box, { target: { value: 'g' } });
    await new Promise((r) => setTimeout(r, 400));
    expect(calls.some((c) => c.url.includes('search_query'))).toBe(false);
    fireEvent.change(box, { target: { value: 'Google' } });
    await waitFor(() => expect(screen.queryByTestId('app-card-2')).not.toBeInTheDocument(), { timeout: 5000 });
    expect(screen.getByTestId('app-card-1')).toBeInTheDocument();
    const searched = calls.filter((c) => c.url.includes('search_query'));
    expect(searched).toHaveLength(1);
    expect(searched[0].url).toBe('/api/v1/apps?page_size=80&page_index=1&search_query=Google');
    expect(await screen.findByText('END')).toBeInTheDocument();
  });

  it('opens the Manage Accounts drawer of an app', async () => {
    fakeApi(5);
    renderPage();
    fireEvent.click(await screen.findByTestId('app-card-1'));
    expect(await screen.findByText('- Manage Accounts')).toBeInTheDocument();
    expect(screen.getByTestId('manage-accounts-title')).toHaveTextContent('Google Sheets');
    expect(await screen.findByText('No Account Found.')).toBeInTheDocument();
  });

  it('ends the session and goes to /login when the apps fail to load', async () => {
    writeSession({ token: 'tok', keepMeLoggedIn: true, lang: 'en', appId: null });
    fakeApi(5, { fail: true });
    renderPage();
    expect(await screen.findByTestId('login')).toBeInTheDocument();
    expect(readSession()).toBeNull();
  });

  it('helpers: placeholder for images not on this origin, search only from 2 characters', () => {
    expect(appImage('/api/v1/apps/7/icon')).toBe('/api/v1/apps/7/icon');
    expect(appImage('https://x/y.png')).toBe(PLACEHOLDER_IMAGE);
    expect(appImage('http://x/y.png')).toBe(PLACEHOLDER_IMAGE);
    expect(appImage('//x/y.png')).toBe(PLACEHOLDER_IMAGE);
    expect(appImage('javascript:alert(1)')).toBe(PLACEHOLDER_IMAGE);
    expect(appImage(null)).toBe(PLACEHOLDER_IMAGE);
    expect(serverSearch(' g ')).toBeUndefined();
    expect(serverSearch(' gm ')).toBe('gm');
  });
});
