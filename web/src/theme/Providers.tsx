import { QueryClientProvider } from '@tanstack/react-query';
import { App as AntApp, ConfigProvider } from 'antd';
import type { ReactNode } from 'react';
import { queryClient } from '../api/typed';
import { TOAST_SECONDS } from '../lib/constants';
import { themeConfig, useTheme } from './theme';

/** Query client, theme plus antd's App context, whose `message` shows toasts at the top for 2.5 s. */
export function Providers({ children }: { children: ReactNode }) {
  const mode = useTheme((s) => s.mode);
  return (
    <QueryClientProvider client={queryClient}>
      <ConfigProvider theme={themeConfig(mode)}>
        <AntApp message={{ top: 24, duration: TOAST_SECONDS, maxCount: 3 }} className={`kz-root kz-${mode}`}>
          {children}
        </AntApp>
      </ConfigProvider>
    </QueryClientProvider>
  );
}
