import { fetchClient } from './typed';

/** Revoke the session's token at the api (best effort: the caller clears the cookie either way). */
export async function revokeSession(): Promise<void> {
  try {
    await fetchClient.POST('/api/v1/users/logout');
  } catch {
    // Already expired or offline: nothing left to revoke.
  }
}
