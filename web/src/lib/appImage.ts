/**
 * App icons come from the api itself (`/api/v1/apps/{id}/icon`: a bundled image or a monogram):
 * the browser asks no third-party host. Only a path on this origin is used; any other address
 * (an old reply's `https://...` logo, `javascript:`, `//host/...`) is not loaded.
 */
export function sameOriginImage(url: string | null | undefined): string | undefined {
  return url && url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\') ? url : undefined;
}
