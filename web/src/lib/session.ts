/**
 * The signed-in session lives in a cookie named `jwtToken`.
 *
 * Its value is the session record `{token, keepMeLoggedIn, lang, appId}` as JSON,
 * UTF-8 encoded and then base64 encoded (standard alphabet), so it is a single
 * cookie-safe token. With keep-me-logged-in the cookie lasts 30 days, otherwise it
 * is a session cookie that the browser drops when it closes.
 */
export const SESSION_COOKIE = 'jwtToken';
export const KEEP_LOGGED_IN_DAYS = 30;
export const DEFAULT_LANG = 'en';

export interface SessionRecord {
  token: string;
  keepMeLoggedIn: boolean;
  lang: string;
  appId: string | null;
}

function toBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  bytes.forEach((b) => {
    binary += String.fromCharCode(b);
  });
  return btoa(binary);
}

function fromBase64(encoded: string): string {
  const binary = atob(encoded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

export function encodeSession(record: SessionRecord): string {
  return toBase64(JSON.stringify(record));
}

export function decodeSession(value: string): SessionRecord | null {
  try {
    const parsed: unknown = JSON.parse(fromBase64(decodeURIComponent(value)));
    if (!parsed || typeof parsed !== 'object') return null;
    const rec = parsed as Partial<SessionRecord>;
    if (typeof rec.token !== 'string' || rec.token === '') return null;
    return {
      token: rec.token,
      keepMeLoggedIn: Boolean(rec.keepMeLoggedIn),
      lang: typeof rec.lang === 'string' && rec.lang ? rec.lang : DEFAULT_LANG,
      appId: typeof rec.appId === 'string' ? rec.appId : null,
    };
  } catch {
    return null;
  }
}

function readCookie(name: string): string | null {
  const prefix = `${name}=`;
  for (const part of document.cookie.split(';')) {
    const item = part.trim();
    if (item.startsWith(prefix)) return item.slice(prefix.length);
  }
  return null;
}

export function readSession(): SessionRecord | null {
  const raw = readCookie(SESSION_COOKIE);
  return raw ? decodeSession(raw) : null;
}

export function writeSession(record: SessionRecord): void {
  const attrs = ['path=/', 'SameSite=Lax'];
  if (record.keepMeLoggedIn) attrs.push(`Max-Age=${KEEP_LOGGED_IN_DAYS * 24 * 60 * 60}`);
  if (window.location.protocol === 'https:') attrs.push('Secure');
  document.cookie = `${SESSION_COOKIE}=${encodeSession(record)}; ${attrs.join('; ')}`;
}

export function clearSession(): void {
  document.cookie = `${SESSION_COOKIE}=; path=/; Max-Age=0; SameSite=Lax`;
}

export function sessionToken(): string | null {
  return readSession()?.token ?? null;
}
