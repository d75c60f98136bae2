import { describe, expect, it } from 'vitest';
import { clearSession, decodeSession, encodeSession, readSession, SESSION_COOKIE, writeSession } from './session';

const record = { token: 'tok.en.ü', keepMeLoggedIn: true, lang: 'en', appId: null };

describe('session cookie', () => {
  it('is base64 of the JSON record and round-trips', () => {
    const encoded = encodeSession(record);
    expect(encoded).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0))))).toEqual(record);
    expect(decodeSession(encoded)).toEqual(record);
  });

  it('rejects garbage and records without a token', () => {
    expect(decodeSession('not base64 !')).toBeNull();
    expect(decodeSession(btoa(JSON.stringify({ token: '' })))).toBeNull();
  });

  it('writes, reads and clears the jwtToken cookie', () => {
    writeSession(record);
    expect(document.cookie).toContain(`${SESSION_COOKIE}=`);
    expect(readSession()).toEqual(record);
    clearSession();
    expect(readSession()).toBeNull();
  });
});
