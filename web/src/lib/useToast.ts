import { App } from 'antd';

/** Top toasts (antd message) configured by <Providers>: 2.5 s at the top. */
export function useToast() {
  return App.useApp().message;
}
