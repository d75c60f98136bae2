import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';

// findBy*/waitFor give up after 1 s by default: too short for antd forms on a loaded 2-core CI machine.
configure({ asyncUtilTimeout: 5000 });

// The captcha web component solves proof-of-work in workers; tests drive its events instead.
vi.mock('altcha', () => ({}));

class ResizeObserverStub {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= ResizeObserverStub as unknown as typeof ResizeObserver;

if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addListener: () => {},
      removeListener: () => {},
      addEventListener: () => {},
      removeEventListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList;
}

// React Flow reads these from the DOM; jsdom has no layout.
if (!('DOMMatrixReadOnly' in window)) {
  class DOMMatrixReadOnlyStub {
    m22 = 1;
    constructor() {}
  }
  (window as unknown as { DOMMatrixReadOnly: unknown }).DOMMatrixReadOnly = DOMMatrixReadOnlyStub;
}

afterEach(() => {
  cleanup();
  document.cookie.split(';').forEach((c) => {
    const name = c.split('=')[0].trim();
    if (name) document.cookie = `${name}=; path=/; Max-Age=0`;
  });
  localStorage.clear();
  vi.restoreAllMocks();
});
