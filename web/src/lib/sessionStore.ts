/** The current session, mirrored from the `jwtToken` cookie for React. */
import { create } from 'zustand';
import { clearSession, readSession, writeSession, type SessionRecord } from './session';

interface SessionState {
  session: SessionRecord | null;
  signIn: (record: SessionRecord) => void;
  signOut: () => void;
  /** Re-read the cookie (another tab or the api client may have cleared it). */
  refresh: () => void;
}

export const useSession = create<SessionState>()((set) => ({
  session: readSession(),
  signIn: (record) => {
    writeSession(record);
    set({ session: record });
  },
  signOut: () => {
    clearSession();
    set({ session: null });
  },
  refresh: () => set({ session: readSession() }),
}));
