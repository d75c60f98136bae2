import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderAt } from '../../test/utils';
import { AppPicker } from './AppPicker';

const app = (id: number, name: string, image_url: string | null) => ({
  id,
  name,
  image_url,
  status: 'Active',
  account_count: 0,
  provider: `app${id}`,
  app_type: 'api',
  auth_type: null,
  categories: [],
});

describe('AppPicker', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    queryClient.clear();
  });

  it('renders no image from a host other than its own', async () => {
    mockFetch(() => ({
      body: {
        apps: [
          app(1, 'GitHub', '/api/v1/apps/1/icon'),
          app(2, 'Old Reply', 'https://github.githubassets.com/images/GitHub-Mark.png'),
          app(3, 'Protocol Relative', '//cdn.example.com/logo.png'),
          app(4, 'No Icon', null),
        ],
        total_apps: 4,
      },
    }));
    renderAt(<AppPicker listings={['all']} onPick={() => {}} placeholder="Search" searchTestId="search" />);
    await screen.findByTestId('app-tile-app4');
    const sources = [...document.querySelectorAll('img')].map((img) => img.getAttribute('src') ?? '');
    expect(sources).toEqual(['/api/v1/apps/1/icon']);
    for (const src of sources) expect(new URL(src, window.location.href).host).toBe(window.location.host);
  });
});
