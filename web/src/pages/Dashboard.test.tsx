import { fireEvent, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../api/typed';
import { readSession, writeSession } from '../lib/session';
import { mockFetch, renderRoutes } from '../test/utils';
import { Dashboard } from './Dashboard';

const STATS = {
  total_konnects: 17,
  active_konnects: 5,
  inactive_konnects: 12,
  task_limit: 1000,
  task_consumed: 250,
  task_available: 750,
};

const flow = (id: number) => ({
  id,
  konnect_name: `Flow ${id}`,
  status: id % 2 ? 'Published' : 'Draft',
  created_at: '2026-11-21T10:00:00Z',
  success_task_count: 0,
  error_task_count: 0,
  left_app: { name: 'Webhook' },
  right_apps: [],
  webhook_url: 'http://hooks/x',
  folder_id: null,
});

const renderDashboard = () =>
  renderRoutes(
    [
      { path: '/dashboard', element: <Dashboard /> },
      { path: '/login', element: <div data-testid="login" /> },
    ],
    '/dashboard',
  );

describe('Dashboard', () => {
  beforeEach(() => queryClient.clear());

  it('shows the counts of the stats call, the premium offer and the latest 6 of 15 flows', async () => {
    const calls = mockFetch((c) => {
      if (c.url === '/api/v1/dashboard/stats') return { body: STATS };
      if (c.url.startsWith('/api/v1/konnects?'))
        return { body: { konnects: Array.from({ length: 15 }, (_, i) => flow(i + 1)), total_konnects: 17 } };
      return undefined;
    });
    renderDashboard();
    await waitFor(() => expect(screen.getByTestId('stat-total')).toHaveTextContent('17'));
    expect(screen.getByTestId('stat-active')).toHaveTextContent('5');
    expect(screen.getByTestId('stat-inactive')).toHaveTextContent('12');
    expect(screen.getByTestId('tasks-consumed')).toHaveTextContent('Consumed: 250');
    expect(screen.getByTestId('tasks-available')).toHaveTextContent('Available: 750');
    expect(screen.getByTestId('tasks-limit')).toHaveTextContent('Limit: 1000');
    expect(screen.getByText('Upgrade to Premium')).toBeInTheDocument();
    expect(screen.getByText(/\$99\/Year/)).toBeInTheDocument();
    // The $99/Year card has its action: how to get the Premium plan.
    fireEvent.click(screen.getByTestId('premium-upgrade'));
    expect(await screen.findByTestId('plan-change-command')).toHaveTextContent(/plan set \S+ Premium$/);
    expect(screen.getByText('Extra Tasks')).toBeInTheDocument();
    expect(await screen.findByText('Flow 6')).toBeInTheDocument();
    expect(screen.queryByText('Flow 7')).not.toBeInTheDocument();
    for (const col of ['Name', 'Created At', 'Status', 'Logs', 'Action']) expect(screen.getAllByText(col).length).toBeGreaterThan(0);
    expect(calls.find((c) => c.url.startsWith('/api/v1/konnects'))?.url).toBe('/api/v1/konnects?page_size=15&page_index=1');
  });

  it('shows the empty text without flows', async () => {
    mockFetch((c) => {
      if (c.url === '/api/v1/dashboard/stats') return { body: { ...STATS, total_konnects: 0 } };
      if (c.url.startsWith('/api/v1/konnects?')) return { body: { konnects: [], total_konnects: 0 } };
      return undefined;
    });
    renderDashboard();
    expect(await screen.findByText('No recent flow found. Create a flow.')).toBeInTheDocument();
  });

  it('ends the session and goes to /login when the stats fail', async () => {
    writeSession({ token: 'tok', keepMeLoggedIn: true, lang: 'en', appId: null });
    mockFetch((c) => {
      if (c.url === '/api/v1/dashboard/stats') return { status: 500, body: { message: 'boom' } };
      if (c.url.startsWith('/api/v1/konnects?')) return { body: { konnects: [], total_konnects: 0 } };
      return undefined;
    });
    renderDashboard();
    expect(await screen.findByTestId('login')).toBeInTheDocument();
    expect(readSession()).toBeNull();
  });
});
