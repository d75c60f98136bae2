import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderAt } from '../../test/utils';
import { baseOf, RevisionsPanel } from './RevisionsPanel';

const node = (id: string, app: string, value?: string) => ({
  id,
  type: 'Action',
  position: { x: 0, y: 0 },
  data: {
    node_id: id,
    app_detail: { name: app },
    selectedEvent: { name: 'Hash Text' },
    ...(value === undefined ? {} : { configResponses: [{ config_key: 'text', label: 'Text', value }] }),
  },
});
const canvasOf = (text: string, extra: ReturnType<typeof node>[] = []) => ({
  apps: [node('node-1', 'Webhook'), node('node-2', 'Hash', text), ...extra],
  links: [],
  dataForSelect: {},
  flowName: 'F',
});
const item = (number: number, live: boolean, extra: Record<string, unknown> = {}) => ({
  number,
  message: number === 1 ? 'First version' : '',
  published_by: 1,
  published_by_email: 'ada@example.com',
  created_at: '2026-11-27T01:00:00Z',
  restored_from: null,
  live,
  ...extra,
});
const CANVASES: Record<number, ReturnType<typeof canvasOf>> = {
  1: canvasOf('{{node-1.email}}'),
  2: canvasOf('v2-{{node-1.email}}', [node('node-3', 'Filter')]),
};

describe('baseOf', () => {
  it('compares with the live revision, the live one with the one before it', () => {
    expect(baseOf(1, 2, [2, 1])).toBe(2);
    expect(baseOf(2, 2, [2, 1])).toBe(1);
    expect(baseOf(5, 5, [5, 3])).toBe(3); // 4 was deleted by retention
    expect(baseOf(1, 1, [1])).toBeNull();
    expect(baseOf(3, null, [3, 2])).toBe(2); // the flow is not live
  });
});

describe('RevisionsPanel', () => {
  beforeEach(() => queryClient.clear());

  it('lists revisions, shows the diff against the live one and restores with a confirm', async () => {
    const restored = vi.fn();
    const calls = mockFetch((c) => {
      if (c.url.startsWith('/api/v1/konnects/7/revisions?'))
        return { body: { revisions: [item(2, true), item(1, false)], total: 2, live_revision: 2 } };
      const one = /^\/api\/v1\/konnects\/7\/revisions\/(\d+)$/.exec(c.url);
      if (one) {
        const n = Number(one[1]);
        return { body: { ...item(n, n === 2), canvas_json: CANVASES[n], spec: {} } };
      }
      if (c.url === '/api/v1/konnects/7/revisions/1/restore' && c.method === 'POST')
        return {
          body: {
            status: 'SUCCESS',
            message: 'Revision 1 restored and published as revision 3',
            konnect_id: 7,
            konnect_status: 'Published',
            webhook_url: 'http://hooks/x',
            revision: 3,
          },
        };
      return undefined;
    });
    renderAt(<RevisionsPanel konnectId={7} open onClose={() => undefined} onRestored={restored} />);
    const first = await screen.findByTestId('revision-item-1');
    expect(first).toHaveTextContent('First version');
    expect(first).toHaveTextContent('ada@example.com');
    expect(screen.getByTestId('revision-live-2')).toHaveTextContent('Live');
    expect(screen.queryByTestId('revision-live-1')).not.toBeInTheDocument();

    // Revision 1 against the live revision 2: the Hash text changed back, the Filter would go.
    await userEvent.click(first);
    const diff = await screen.findByTestId('revision-diff');
    expect(within(diff).getByTestId('revision-diff-title')).toHaveTextContent('Changes from revision 2 to revision 1');
    const hash = within(diff).getByTestId('diff-node-node-2');
    expect(hash).toHaveAttribute('data-kind', 'changed');
    expect(within(hash).getByTestId('diff-before')).toHaveTextContent('v2-{{node-1.email}}');
    expect(within(hash).getByTestId('diff-after')).toHaveTextContent('{{node-1.email}}');
    expect(within(diff).getByTestId('diff-node-node-3')).toHaveAttribute('data-kind', 'removed');
    expect(within(diff).queryByTestId('diff-node-node-1')).not.toBeInTheDocument();

    // Restore asks first, then posts with the message and reloads the editor.
    await userEvent.type(screen.getByTestId('revision-restore-message'), 'Back to v1');
    await userEvent.click(screen.getByTestId('revision-restore'));
    expect(calls.some((c) => c.url.endsWith('/restore'))).toBe(false);
    await userEvent.click(await screen.findByTestId('revision-restore-confirm'));
    await waitFor(() => expect(restored).toHaveBeenCalledTimes(1));
    const post = calls.find((c) => c.url === '/api/v1/konnects/7/revisions/1/restore');
    expect(post?.body).toEqual({ message: 'Back to v1' });
    expect(await screen.findByText('Revision 1 restored and published as revision 3')).toBeInTheDocument();
  }, 30_000);

  it('shows the live revision against the one before it, without a Restore', async () => {
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/konnects/7/revisions?'))
        return { body: { revisions: [item(2, true), item(1, false)], total: 2, live_revision: 2 } };
      const one = /^\/api\/v1\/konnects\/7\/revisions\/(\d+)$/.exec(c.url);
      if (one) return { body: { ...item(Number(one[1]), one[1] === '2'), canvas_json: CANVASES[Number(one[1])], spec: {} } };
      return undefined;
    });
    renderAt(<RevisionsPanel konnectId={7} open onClose={() => undefined} onRestored={() => undefined} />);
    await userEvent.click(await screen.findByTestId('revision-item-2'));
    expect(await screen.findByTestId('revision-diff-title')).toHaveTextContent('Changes from revision 1 to revision 2');
    expect(screen.getByTestId('diff-node-node-3')).toHaveAttribute('data-kind', 'added');
    expect(screen.queryByTestId('revision-restore')).not.toBeInTheDocument();
  }, 30_000);

  it('says when a flow has no revision yet and shows a refused restore', async () => {
    mockFetch((c) => {
      if (c.url.startsWith('/api/v1/konnects/8/revisions?')) return { body: { revisions: [], total: 0, live_revision: null } };
      return undefined;
    });
    renderAt(<RevisionsPanel konnectId={8} open onClose={() => undefined} onRestored={() => undefined} />);
    expect(await screen.findByText(/Not published yet/)).toBeInTheDocument();
  });
});
