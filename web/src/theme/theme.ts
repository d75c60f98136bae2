/** Light (white) and dark (dark blue) themes; the choice is stored in localStorage. */
import { theme as antdTheme, type ThemeConfig } from 'antd';
import { create } from 'zustand';

export type ThemeMode = 'light' | 'dark';
export const THEME_STORAGE_KEY = 'konnectz.theme';

function storedMode(): ThemeMode {
  try {
    return localStorage.getItem(THEME_STORAGE_KEY) === 'dark' ? 'dark' : 'light';
  } catch {
    return 'light';
  }
}

interface ThemeState {
  mode: ThemeMode;
  setMode: (mode: ThemeMode) => void;
  toggle: () => void;
}

export const useTheme = create<ThemeState>()((set, get) => ({
  mode: storedMode(),
  setMode: (mode) => {
    try {
      localStorage.setItem(THEME_STORAGE_KEY, mode);
    } catch {
      // Storage can be unavailable (private mode); the choice then lasts for this page only.
    }
    set({ mode });
  },
  toggle: () => get().setMode(get().mode === 'dark' ? 'light' : 'dark'),
}));

export const BRAND_BLUE = '#2f6bff';

export function themeConfig(mode: ThemeMode): ThemeConfig {
  if (mode === 'dark') {
    return {
      algorithm: antdTheme.darkAlgorithm,
      token: {
        colorPrimary: BRAND_BLUE,
        colorBgBase: '#0b1733',
        colorBgContainer: '#102042',
        colorBgElevated: '#14284f',
        colorBgLayout: '#0b1733',
        colorBorder: '#24396b',
        // The default (25 % white) is hard to read on the dark blue containers.
        colorTextPlaceholder: 'rgba(255, 255, 255, 0.45)',
      },
      components: { Layout: { siderBg: '#081127', headerBg: '#0d1b3a', bodyBg: '#0b1733' } },
    };
  }
  return {
    algorithm: antdTheme.defaultAlgorithm,
    token: { colorPrimary: BRAND_BLUE, colorBgBase: '#ffffff', colorBgLayout: '#f5f7fb' },
    components: { Layout: { siderBg: '#ffffff', headerBg: '#ffffff', bodyBg: '#f5f7fb' } },
  };
}
