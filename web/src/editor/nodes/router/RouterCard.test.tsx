import { ReactFlowProvider } from '@xyflow/react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../../api/typed';
import { mockFetch, renderAt } from '../../../test/utils';
import { EditorProvider } from '../../EditorContext';
import { EditorCanvas } from '../../EditorCanvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation, type Operation } from '../../model/operations';
import { joinOf, pathNodes } from '../../model/paths';
import type { Flow } from '../../model/types';
import { createEditorStore } from '../../store';

const hash = addOn('hash', 'Hash', 13);
const joinApp = addOn('join', 'Join', 15);

function setup() {
  const ops: Operation[] = [
    { type: 'addTrigger', app: webhookApp },
    { type: 'addAction', app: addOn('router', 'Router', 14) },
    { type: 'addAction', app: hash, after: 'node-2', handle: 'path-1' },
  ];
  const flow = ops.reduce(applyOperation, { apps: [], links: [] } as Flow);
  const store = createEditorStore(flow);
  const calls = mockFetch((c) => {
    const path = c.url.split('?')[0];
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: c.url.includes('search_query=join') ? [joinApp] : [hash, joinApp], total_apps: 2 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [], total_apps: 0 } };
    return undefined;
  });
  renderAt(
    <ReactFlowProvider>
      <EditorProvider store={store}>
        <EditorCanvas />
      </EditorProvider>
    </ReactFlowProvider>,
  );
  return { store, calls };
}

describe('the router and join cards', () => {
  beforeEach(() => queryClient.clear());

  it("shows the mode and each path (name, Otherwise, its steps); edits paths; a path's Add step puts the picked app on that path", async () => {
    const { store } = setup();
    const card = await screen.findByTestId('node-node-2');
    expect(card).toHaveTextContent('Run every matching path');
    expect(screen.getByTestId('path-name-node-2-path-1')).toHaveValue('Path 1');
    expect(screen.getByTestId('path-otherwise-node-2-path-2')).toBeChecked();
    // The Otherwise path has no conditions; the other path has the Filter's condition editor.
    expect(screen.getByTestId('condition-field-node-2-path-1-0')).toBeInTheDocument();
    expect(screen.queryByTestId('condition-field-node-2-path-2-0')).not.toBeInTheDocument();
    expect(screen.getByTestId('path-steps-node-2-path-1')).toHaveTextContent('1 step');
    expect(screen.getByTestId('path-steps-node-2-path-2')).toHaveTextContent('No steps yet');
    // A step on a path has no Set Delay (no delay inside a path); its other header buttons stay.
    expect(screen.getByTestId('node-refresh-node-3')).toBeInTheDocument();
    expect(screen.queryByTestId('node-delay-node-3')).not.toBeInTheDocument();

    // A name another path has is refused with the reason.
    fireEvent.change(screen.getByTestId('path-name-node-2-path-2'), { target: { value: 'Path 1' } });
    expect(await screen.findByTestId('path-name-error-node-2-path-2')).toHaveTextContent('Another path has this name.');
    fireEvent.change(screen.getByTestId('path-name-node-2-path-2'), { target: { value: 'Small' } });
    await waitFor(() => expect(screen.queryByTestId('path-name-error-node-2-path-2')).not.toBeInTheDocument());
    expect(store.getState().apps[1].data.routerPaths?.[1].name).toBe('Small');

    await userEvent.click(screen.getByTestId('router-add-path-node-2'));
    expect(store.getState().apps[1].data.routerPaths?.map((p) => p.name)).toEqual(['Path 1', 'Small', 'Path 3']);
    await userEvent.click(await screen.findByTestId('path-remove-node-2-path-3'));
    expect(store.getState().apps[1].data.routerPaths).toHaveLength(2);

    await userEvent.click(screen.getByTestId('path-add-step-node-2-path-2'));
    expect(store.getState().addTarget).toEqual({ after: 'node-2', handle: 'path-2' });
    const drawer = await screen.findByTestId('action-drawer-search');
    expect(drawer).toBeVisible();
    await userEvent.click(await screen.findByTestId('app-tile-hash'));
    await waitFor(() => expect(pathNodes(store.getState(), 'node-2', 'path-2').map((n) => n.id)).toEqual(['node-4']));
    expect(store.getState().addTarget).toBeNull();
  });

  it("Join paths adds the catalogue's join after every path; the join's + adds the step after it", async () => {
    const { store, calls } = setup();
    await userEvent.click(await screen.findByTestId('router-join-node-2'));
    await waitFor(() => expect(joinOf(store.getState(), 'node-2')?.id).toBe('node-4'));
    expect(calls.some((c) => c.url.includes('search_query=join'))).toBe(true);
    expect(store.getState().apps.find((n) => n.id === 'node-4')?.data.app_detail.id).toBe(15);
    const join = await screen.findByTestId('node-node-4');
    expect(within(join).getByTestId('join-paths-node-4')).toHaveTextContent('Path 1');
    expect(within(join).getByTestId('join-paths-node-4')).toHaveTextContent('Path 2');
    expect(within(join).getByTestId('node-summary-node-4')).toHaveTextContent('Wait for all paths');
    expect(screen.queryByTestId('router-join-node-2')).not.toBeInTheDocument();
    await userEvent.click(within(join).getByTestId('join-add-step-node-4'));
    expect(store.getState().addTarget).toEqual({ after: 'node-4', handle: null });
    await userEvent.click(await screen.findByTestId('app-tile-hash'));
    await waitFor(() => expect(store.getState().links.some((l) => l.source === 'node-4' && l.target === 'node-5')).toBe(true));
    // The step after the join is on no path: it keeps its Set Delay.
    expect(await screen.findByTestId('node-delay-node-5')).toBeInTheDocument();
  });
});
