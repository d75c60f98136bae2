import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../api/typed';
import { writeSession } from '../../lib/session';
import { useSession } from '../../lib/sessionStore';
import { renderRoutes } from '../../test/utils';
import { AccountPage } from './AccountPage';

const PROFILE = { id: 1, email: 'ada@example.com', first_name: 'Ada', last_name: 'L', image_url: null as string | null, current_plan: 'Free', country: null, timezone: null, preferred_language: 'en', is_admin: false };

interface Upload {
  contentType: string | null;
  image: File | null;
}

function fakeApi() {
  const uploads: Upload[] = [];
  let profile = { ...PROFILE };
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
    const path = new URL(req.url, 'http://localhost').pathname;
    let body: unknown = profile;
    if (path === '/api/v1/users/profile' && req.method === 'POST') {
      const form = await req.formData();
      const image = form.get('image') as File | null;
      uploads.push({ contentType: req.headers.get('Content-Type'), image });
      profile = { ...profile, image_url: uploads.length === 1 ? 'http://app.test/api/v1/avatars/t.png' : null };
      body = { key: 'UPDATE_SUCCESS', message: 'ok', profile };
    }
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
  return uploads;
}

describe('Avatar tab', () => {
  beforeEach(() => {
    queryClient.clear();
    const record = { token: 't', keepMeLoggedIn: false, lang: 'en', appId: null };
    writeSession(record);
    useSession.setState({ session: record });
  });
  afterEach(() => vi.restoreAllMocks());

  it('asks for an image, uploads it as multipart and removes it with an empty image', async () => {
    const uploads = fakeApi();
    // jsdom's Blob does not survive undici's Request intact: record what the tab appends instead.
    const appended: [string, Blob, string | undefined][] = [];
    const append = FormData.prototype.append;
    vi.spyOn(FormData.prototype, 'append').mockImplementation(function (this: FormData, name: string, value: string | Blob, filename?: string) {
      if (value instanceof Blob) appended.push([name, value, filename]);
      append.call(this, name, value as Blob, filename);
    });
    renderRoutes([{ path: '/account/:tab', element: <AccountPage /> }], '/account/avatar');
    fireEvent.click(await screen.findByTestId('avatar-upload'));
    expect(await screen.findByText('Select the image before uploading.')).toBeInTheDocument();
    expect(uploads).toHaveLength(0);

    const file = new File([new Uint8Array([137, 80, 78, 71])], 'me.png', { type: 'image/png' });
    // The themed Choose Image button opens the (hidden) file input and shows the chosen name.
    const input = screen.getByTestId('avatar-file') as HTMLInputElement;
    expect(input).not.toBeVisible();
    const picked = vi.spyOn(input, 'click');
    fireEvent.click(screen.getByTestId('avatar-choose'));
    expect(picked).toHaveBeenCalled();
    expect(screen.getByTestId('avatar-file-name')).toHaveTextContent('No image chosen');
    fireEvent.change(screen.getByTestId('avatar-file'), { target: { files: [file] } });
    expect(screen.getByTestId('avatar-file-name')).toHaveTextContent('me.png');
    fireEvent.click(screen.getByTestId('avatar-upload'));
    await waitFor(() => expect(uploads).toHaveLength(1));
    expect(uploads[0].contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(appended[0][0]).toBe('image');
    expect(appended[0][1]).toBe(file);
    expect(await screen.findByText('Picture updated')).toBeInTheDocument();

    await waitFor(() => expect(screen.getByTestId('avatar-remove')).not.toBeDisabled());
    fireEvent.click(screen.getByTestId('avatar-remove'));
    await waitFor(() => expect(uploads).toHaveLength(2));
    expect(appended[1][0]).toBe('image');
    expect(appended[1][1].size).toBe(0);
    expect(await screen.findByText('Picture removed')).toBeInTheDocument();
  });
});
