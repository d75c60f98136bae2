import { create } from 'zustand';
import { call, fetchClient } from '../api/typed';
import type { Profile } from '../api/models';

interface ProfileState {
  profile: Profile | null;
  load: () => Promise<void>;
  clear: () => void;
}

export const useProfile = create<ProfileState>()((set) => ({
  profile: null,
  load: async () => {
    try {
      set({ profile: await call(fetchClient.GET('/api/v1/users/profile')) });
    } catch {
      // A 401 is handled by the api client (back to /login); other failures keep the old profile.
    }
  },
  clear: () => set({ profile: null }),
}));
