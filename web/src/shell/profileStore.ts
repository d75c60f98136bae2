import { create } from 'zustand';
import { userApi } from '../api/endpoints';
import type { Profile } from '../api/types';

interface ProfileState {
  profile: Profile | null;
  load: () => Promise<void>;
  clear: () => void;
}

export const useProfile = create<ProfileState>()((set) => ({
  profile: null,
  load: async () => {
    try {
      set({ profile: await userApi.profile() });
    } catch {
      // A 401 is handled by the api client (back to /login); other failures keep the old profile.
    }
  },
  clear: () => set({ profile: null }),
}));
