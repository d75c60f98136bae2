import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { writeSession } from '../../lib/session';
import { useSession } from '../../lib/sessionStore';
import { renderRoutes } from '../../test/utils';
import { AiFramePage } from './AiFramePage';

function fakeApi(status: number, body: unknown) {
  const paths: string[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
    paths.push(new URL(req.url, 'http://localhost').pathname);
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  });
  return paths;
}

const render = () => renderRoutes([{ path: '/agentflows', element: <AiFramePage widget="agentflows" title="Agentflows" /> }], '/agentflows');

describe('AI frame pages', () => {
  beforeEach(() => {
    queryClient.clear();
    const record = { token: 't', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(record);
    useSession.setState({ session: record });
  });
  afterEach(() => vi.restoreAllMocks());

  it('frames the configured URL with camera and microphone allowed', async () => {
    const url = 'https://ai.example.com/agentflows?authToken=abc';
    const paths = fakeApi(200, { id: 'agentflows', name: 'Agentflows', configured: true, url });
    render();
    const frame = await screen.findByTestId('ai-frame');
    expect(frame).toHaveAttribute('src', url);
    expect(frame).toHaveAttribute('allow', 'camera; microphone');
    expect(paths).toEqual(['/api/v1/widgets/details/agentflows']);
  });

  it('says plainly when no AI host is configured, and what to start', async () => {
    fakeApi(200, {
      id: 'agentflows',
      name: 'Agentflows',
      configured: false,
      url: null,
      message: 'No AI host is configured for this Konnectz installation.',
    });
    render();
    expect(await screen.findByText('No AI host is configured')).toBeInTheDocument();
    expect(screen.getByTestId('ai-start-command')).toHaveTextContent('make dev AI=flowise');
    expect(screen.getByTestId('ai-not-configured')).toHaveTextContent('KONNECTZ_AI_HOST_URL');
    expect(screen.queryByTestId('ai-frame')).not.toBeInTheDocument();
  });

  it('shows the error when the call fails', async () => {
    fakeApi(500, { message: 'boom' });
    render();
    expect(await screen.findByTestId('ai-failed')).toHaveTextContent('boom');
  });
});
