import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../api/typed';
import { writeSession } from '../lib/session';
import { useSession } from '../lib/sessionStore';
import { RequireSession } from '../shell/RequireSession';
import { mockFetch, renderRoutes, type FetchCall } from '../test/utils';
import { CanvasEditor } from './CanvasEditor';
import type { SaveKonnectRequest } from './save';
import { LIVE_PROMPT } from './EditorTopBar';
import { addOn, apiApp, webhookApp } from './model/fixtures';
import { MSG } from './model/rules';
import { WEBHOOK_URL_MISSING } from './nodes/webhook/WebhookNode';

function backend(extra?: (c: FetchCall) => { status?: number; body: unknown } | undefined) {
  return mockFetch((c) => {
    const custom = extra?.(c);
    if (custom) return custom;
    const path = c.url.split('?')[0];
    if (path === '/api/v1/apps/get_triggers') return { body: { apps: [webhookApp], total_apps: 1 } };
    if (path === '/api/v1/apps/get_actions') return { body: { apps: [], total_apps: 0 } };
    if (path === '/api/v1/apps/add_on_apps') return { body: { apps: [apiApp], total_apps: 1 } };
    if (c.url === '/api/v1/konnects/test_and_review')
      return {
        body: { test_status: 'Success', display_message: 'ok', raw_response: {}, konnect_id: 9, konnect_activity_id: 1 },
      };
    return undefined;
  });
}

function renderEditor(path = '/create') {
  const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
  writeSession(session);
  useSession.setState({ session });
  const element = (
    <RequireSession>
      <CanvasEditor />
    </RequireSession>
  );
  return renderRoutes(
    [
      { path: '/create', element },
      { path: '/create/:id', element },
      { path: '/flows/home', element: <div data-testid="flows-home" /> },
      { path: '/login', element: <div data-testid="login-page" /> },
    ],
    path,
  );
}

/** Test & Review of the trigger through its drawer (saving needs the konnect_id it answers). */
async function testTrigger() {
  await userEvent.click(screen.getByTestId('node-test-node-1'));
  await userEvent.click(await screen.findByTestId('trigger-test-proceed-node-1'));
  await waitFor(() => expect(screen.getByTestId('status-node-1')).toHaveAttribute('data-status', 'Success'));
}

async function buildWebhookToApi() {
  await userEvent.click(await screen.findByTestId('app-tile-webhook'));
  expect(await screen.findByTestId('node-node-1')).toBeInTheDocument();
  await userEvent.click(screen.getByTestId('add-action'));
  await userEvent.click(await screen.findByTestId('app-tile-api'));
  expect(await screen.findByTestId('node-node-2')).toBeInTheDocument();
}

describe('CanvasEditor', () => {
  beforeEach(() => queryClient.clear());

  it('starts with the trigger chooser', async () => {
    backend();
    renderEditor();
    expect(await screen.findByText('Choose Trigger')).toBeInTheDocument();
    expect(screen.getByText('Select Trigger to create a workflow.')).toBeInTheDocument();
    expect(screen.getByTestId('trigger-picker-search')).toHaveAttribute('placeholder', 'Search in 1000+ applications');
    expect(await screen.findByTestId('app-tile-webhook')).toHaveTextContent('Webhook');
    expect(screen.getByTestId('flow-name')).toHaveAttribute('placeholder', 'Name of the Flow');
    expect(screen.getByTestId('add-action')).toBeDisabled();
  });

  it('offers a second iterator only as a disabled tile saying why; no permanent hint on the card', async () => {
    const iterator = addOn('iterator', 'Iterator', 7);
    backend((c) =>
      c.url.split('?')[0] === '/api/v1/apps/add_on_apps' ? { body: { apps: [apiApp, iterator], total_apps: 2 } } : undefined,
    );
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('add-action'));
    expect(await screen.findByTestId('app-tile-iterator')).toBeEnabled();
    await userEvent.click(screen.getByTestId('app-tile-iterator'));
    expect(await screen.findByTestId('node-node-2')).toBeInTheDocument();
    expect(screen.queryByText(MSG.iteratorOnce)).not.toBeInTheDocument();

    await userEvent.click(screen.getByTestId('add-action'));
    const tile = await screen.findByTestId('app-tile-iterator');
    expect(tile).toBeDisabled();
    expect(tile).toHaveAccessibleName(`Iterator: ${MSG.iteratorOnce}`);
    await userEvent.hover(tile.parentElement as HTMLElement);
    expect(await screen.findByText(MSG.iteratorOnce)).toBeInTheDocument();
    expect(screen.getByTestId('app-tile-api')).toBeEnabled();
    // Esc closes the drawer, wherever the focus is.
    fireEvent.keyDown(document.body, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('app-tile-iterator')).not.toBeInTheDocument());
    expect(screen.queryByTestId('node-node-3')).not.toBeInTheDocument();
  });

  it('warns and does not call the api when saving without a trigger', async () => {
    const calls = backend();
    renderEditor();
    await userEvent.click(screen.getByTestId('save-flow'));
    expect(await screen.findByText('As you have not choosed trigger,Please make valid flow to save it')).toBeInTheDocument();
    expect(calls.filter((c) => c.url.includes('save_konnect'))).toHaveLength(0);
  });

  it('builds webhook → API call, undoes and redoes, and publishes the canvas_json', async () => {
    const calls = backend((c) =>
      c.url === '/api/v1/konnects/publish_konnect'
        ? { body: { status: 'SUCCESS', message: 'Flow published', konnect_id: 9, konnect_status: 'Published', webhook_url: 'http://h/w/x' } }
        : undefined,
    );
    const { router } = renderEditor();
    await buildWebhookToApi();
    expect(screen.getByTestId('webhook-url-missing')).toHaveTextContent(WEBHOOK_URL_MISSING);

    // Undo removes the action, redo brings it back.
    await userEvent.click(screen.getByTestId('undo'));
    await waitFor(() => expect(screen.queryByTestId('node-node-2')).not.toBeInTheDocument());
    await userEvent.click(screen.getByTestId('redo'));
    expect(await screen.findByTestId('node-node-2')).toBeInTheDocument();

    const node = screen.getByTestId('node-node-2');
    fireEvent.change(within(node).getByTestId('api-endpoint-url'), { target: { value: 'https://example.test/hook' } });
    await userEvent.click(within(node).getByTestId('api-body-add'));
    await userEvent.type(within(node).getByTestId('api-body-key-0'), 'email');
    fireEvent.change(within(node).getByTestId('api-body-value-0'), { target: { value: '{{node-1.email}}' } });
    await userEvent.type(screen.getByTestId('flow-name'), 'Relay');

    await testTrigger();
    await userEvent.click(screen.getByTestId('publish-flow'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/flows/home'));
    expect(await screen.findByText('Flow published')).toBeInTheDocument();

    const publish = calls.find((c) => c.url === '/api/v1/konnects/publish_konnect')!;
    expect(publish.method).toBe('POST');
    expect(publish.headers.Authorization).toBe('Bearer jwt');
    // The trigger's test created the konnect the save names.
    const tested = calls.find((c) => c.url === '/api/v1/konnects/test_and_review')!;
    expect(tested.body).toMatchObject({ node_id: 'node-1', konnect_id: null });
    const body = publish.body as SaveKonnectRequest;
    expect(body).toMatchObject({ konnect_id: 9, canvas_name: true, publish: true });
    expect(body.canvas_json.flowName).toBe('Relay');
    expect(body.canvas_json.dataForSelect).toEqual({});
    expect(body.canvas_json.links).toEqual([
      { id: 'link-node-1-node-2', source: 'node-1', target: 'node-2', sourceHandle: null, targetHandle: null },
    ]);
    const [trigger, action] = body.canvas_json.apps;
    expect(Object.keys(trigger).sort()).toEqual(['data', 'id', 'position', 'type']);
    expect(trigger).toMatchObject({ id: 'node-1', type: 'WebhookInner', data: { app_detail: { app_index: 1, side: 'left' } } });
    expect(action).toMatchObject({
      id: 'node-2',
      type: 'Api',
      data: {
        node_id: 'node-2',
        app_detail: { name: 'API Call', provider: 'api', app_type: 'ADD_ON', app_index: 2, side: 'right' },
        selectedEvent: { id: 'api_call', name: 'Make an API Call' },
        selectedValue: {
          wrap_in_array: 'NO',
          payload_type: 'JSON',
          apiDetails: {
            method: 'POST',
            endpointURL: 'https://example.test/hook',
            headers: [],
            params: [],
            body: [{ key: 'email', value: '{{node-1.email}}' }],
          },
        },
      },
    });
  });

  it('loads a saved flow with its webhook URL and saves it under the same id', async () => {
    const saved = {
      apps: [
        {
          id: 'node-1',
          type: 'WebhookInner',
          position: { x: 0, y: 0 },
          data: {
            node_id: 'node-1',
            app_detail: { ...webhookApp, app_index: 1, side: 'left', webhook_url: null },
            selectedEvent: { id: 'catch_hook', name: 'Catch Webhook' },
            app_status: { type: 'Draft' },
            configResponses: [],
          },
        },
      ],
      links: [],
      dataForSelect: {},
      flowName: 'Old',
    };
    const calls = backend((c) => {
      if (c.url === '/api/v1/konnects/4/edit')
        return { body: { konnect_id: 4, konnect_name: 'Old', status: 'Draft', canvas_json: saved, webhook_url: 'http://127.0.0.1:8080/hooks/abc' } };
      if (c.url === '/api/v1/konnects/save_konnect')
        return { body: { status: 'SUCCESS', message: 'Saved', konnect_id: 4, konnect_status: 'Draft', webhook_url: 'x' } };
      return undefined;
    });
    renderEditor('/create/4');
    expect(await screen.findByTestId('webhook-url')).toHaveTextContent('http://127.0.0.1:8080/hooks/abc');
    expect(screen.getByTestId('flow-name')).toHaveValue('Old');
    await userEvent.click(screen.getByTestId('save-flow'));
    await waitFor(() => expect(calls.some((c) => c.url === '/api/v1/konnects/save_konnect')).toBe(true));
    const body = calls.find((c) => c.url === '/api/v1/konnects/save_konnect')!.body as SaveKonnectRequest;
    expect(body).toMatchObject({ konnect_id: 4, canvas_name: true, publish: false });
  });

  it('shows the server message when saving fails', async () => {
    backend((c) =>
      c.url === '/api/v1/konnects/save_konnect' ? { status: 422, body: { message: 'Endpoint URL is required' } } : undefined,
    );
    renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await testTrigger();
    await userEvent.click(screen.getByTestId('save-flow'));
    expect(await screen.findByText('Endpoint URL is required')).toBeInTheDocument();
  });

  it('shows the conflict of a publish over a change made in the cluster and stays in the editor', async () => {
    const conflict =
      'The konnect was saved but not published: the flow was changed in the cluster (kubectl or a GitOps tool) in a ' +
      'way this version would overwrite: Apply failed with 1 conflict: conflict with "kubectl-patch": .spec.flow.steps. ' +
      "To publish it, make it agree with the cluster's version (kubectl get konnect shows it), or undo the change there.";
    backend((c) =>
      c.url === '/api/v1/konnects/publish_konnect' ? { status: 409, body: { message: conflict, konnect_id: 9 } } : undefined,
    );
    const { router } = renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await testTrigger();
    await userEvent.click(screen.getByTestId('publish-flow'));
    expect(await screen.findByText(conflict)).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/create');
    expect(screen.getByTestId('publish-flow')).not.toBeDisabled();
  });

  it('refuses to save or publish before the trigger was tested (no konnect_id), without a call', async () => {
    const calls = backend();
    const { router } = renderEditor();
    await buildWebhookToApi();
    await userEvent.click(screen.getByTestId('publish-flow'));
    expect(await screen.findByText('As you have not choosed trigger,Please make valid flow to save it')).toBeInTheDocument();
    await userEvent.click(screen.getByTestId('save-flow'));
    expect(calls.filter((c) => /save_konnect|publish_konnect|test_and_review/.test(c.url))).toHaveLength(0);
    expect(router.state.location.pathname).toBe('/create');
  });

  it('asks to save when leaving with nodes', async () => {
    backend();
    const { router } = renderEditor();
    await userEvent.click(await screen.findByTestId('app-tile-webhook'));
    await userEvent.click(screen.getByTestId('editor-dashboard'));
    expect(await screen.findByText('Do You Want to Save the Flow?')).toBeInTheDocument();
    await userEvent.click(screen.getByTestId('leave-no'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/flows/home'));
  });

  function liveFlow(status: 'Published' | 'Draft' = 'Published') {
    const saved = {
      apps: [
        {
          id: 'node-1',
          type: 'WebhookInner',
          position: { x: 0, y: 0 },
          data: {
            node_id: 'node-1',
            app_detail: { ...webhookApp, app_index: 1, side: 'left', webhook_url: 'http://127.0.0.1:8081/hooks/abc' },
            selectedEvent: { id: 'catch_hook', name: 'Catch Webhook' },
            app_status: { type: 'Success' },
            configResponses: [],
          },
        },
      ],
      links: [],
      dataForSelect: {},
      flowName: 'Live one',
    };
    return backend((c) =>
      c.url === '/api/v1/konnects/4/edit'
        ? { body: { konnect_id: 4, konnect_name: 'Live one', status, draft_pending: false, canvas_json: saved } }
        : undefined,
    );
  }

  it('leaves an unchanged published flow without asking to save, and calls nothing', async () => {
    const calls = liveFlow();
    const { router } = renderEditor('/create/4');
    expect(await screen.findByTestId('editor-live')).toHaveTextContent('Live');
    await userEvent.click(screen.getByTestId('editor-dashboard'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/flows/home'));
    expect(screen.queryByText('Do You Want to Save the Flow?')).not.toBeInTheDocument();
    expect(calls.filter((c) => /save_konnect|publish_konnect|update_status|delete/.test(c.url))).toHaveLength(0);
  });

  it('asks before leaving a changed live flow, saying the live version keeps running', async () => {
    liveFlow();
    renderEditor('/create/4');
    expect(await screen.findByTestId('editor-live')).toBeInTheDocument();
    await userEvent.type(screen.getByTestId('flow-name'), ' v2');
    await userEvent.click(screen.getByTestId('editor-dashboard'));
    expect(await screen.findByText('Do You Want to Save the Flow?')).toBeInTheDocument();
    expect(screen.getByText(LIVE_PROMPT)).toBeInTheDocument();
    expect(screen.getByTestId('leave-yes')).toHaveTextContent('Save as pending draft');
    expect(screen.getByTestId('leave-publish')).toHaveTextContent('Publish');
  });

  it('ends the session on a 401', async () => {
    backend((c) => (c.url.startsWith('/api/v1/apps/get_triggers') ? { status: 401, body: { message: 'expired' } } : undefined));
    const { router } = renderEditor();
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(useSession.getState().session).toBeNull();
  });
});
