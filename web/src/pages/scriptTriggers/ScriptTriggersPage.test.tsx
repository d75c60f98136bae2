import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { writeSession } from '../../lib/session';
import { useSession } from '../../lib/sessionStore';
import { mockFetch, renderAt } from '../../test/utils';
import { SCRIPT_STATUS_POLL_MS, ScriptTriggersPage, scriptWindow } from './ScriptTriggersPage';

const waiting = {
  script_id: 9,
  konnect_id: 9,
  app_name: 'Google Forms',
  event_label: 'New Form Response',
  platform: 'Google Apps Script',
  install: ['Open the script editor.', 'Paste the script.'],
  source: "var KONNECTZ_WEBHOOK_URL = 'http://h/hooks/t';",
  webhook_url: 'http://h/hooks/t',
  status: 'WAITING',
  display_message: 'Waiting for the script',
  raw_response: null,
};

describe('the script-triggers page', () => {
  beforeEach(() => {
    queryClient.clear();
    const session = { token: 'jwt', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(session);
    useSession.setState({ session });
  });

  it('shows the script with its URL and steps, polls until RECEIVED, and closes', async () => {
    let received = false;
    const calls = mockFetch((c) =>
      c.url === '/api/v1/script_triggers/9'
        ? { body: received ? { ...waiting, status: 'RECEIVED', display_message: 'Got it', raw_response: { Name: 'Ada' } } : waiting }
        : undefined,
    );
    const close = vi.spyOn(scriptWindow, 'close').mockImplementation(() => undefined);
    renderAt(<ScriptTriggersPage />, '/script-triggers/9', '/script-triggers/:scriptId');
    expect(await screen.findByTestId('script-source')).toHaveTextContent("var KONNECTZ_WEBHOOK_URL = 'http://h/hooks/t';");
    expect(screen.getByText('Google Forms — New Form Response')).toBeInTheDocument();
    expect(screen.getByTestId('script-status')).toHaveTextContent('WAITING');
    expect(screen.getByTestId('script-steps').querySelectorAll('li')).toHaveLength(2);
    received = true;
    await waitFor(() => expect(screen.getByTestId('script-status')).toHaveTextContent('RECEIVED'), {
      timeout: SCRIPT_STATUS_POLL_MS + 2000,
    });
    expect(screen.getByTestId('script-received')).toHaveTextContent('"Name": "Ada"');
    const polls = calls.length;
    await new Promise((r) => setTimeout(r, SCRIPT_STATUS_POLL_MS + 200));
    expect(calls.length).toBe(polls); // no more polling once received
    await userEvent.click(screen.getByTestId('script-close'));
    expect(close).toHaveBeenCalled();
  }, 15000);

  it("shows the server's refusal", async () => {
    mockFetch(() => ({ status: 422, body: { message: "This flow's trigger does not use a custom script" } }));
    renderAt(<ScriptTriggersPage />, '/script-triggers/9', '/script-triggers/:scriptId');
    expect(await screen.findByText("This flow's trigger does not use a custom script")).toBeInTheDocument();
  });
});
