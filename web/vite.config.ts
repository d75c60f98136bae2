/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Vendor chunks that change rarely and are cached apart from the app's code. antd is not one chunk:
// each antd component stays with the lazy pages that use it, so a page loads only its own
// components. A group also takes the dependencies of its modules that no earlier group took, so
// the groups every page needs come first. The initial script's budget (entry and modulepreloads,
// 250 kB gzipped) is checked by scripts/check-initial-size.mjs after each build in `make web-check`.
/** The package a module belongs to, by the first node_modules in its path (a copy nested inside
 * another package counts as that package's). */
function packageOf(id: string): string | undefined {
  return /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(id)?.[1]?.replace('\\', '/');
}

function vendor(name: string, packages: RegExp) {
  return { name, test: (id: string) => packages.test(packageOf(id) ?? '') };
}

const VENDOR_CHUNKS = [
  // Every page: React, the router and the state store.
  vendor('react', /^(react|react-dom|scheduler|react-router|cookie|set-cookie-parser|zustand)$/),
  // Every page: the api client and its query cache.
  vendor('query', /^(@tanstack\/.+|openapi-fetch|openapi-react-query)$/),
  // Every page: antd's style engine and colours (ConfigProvider needs them).
  vendor('antd-style', /^(@ant-design\/(cssinjs|cssinjs-utils|fast-color|colors)|stylis|@emotion\/.+)$/),
  // The editor only: the canvas.
  vendor('xyflow', /^(@xyflow\/.+|d3-.+|classcat)$/),
  // Dates (history filters, date pickers).
  vendor('dayjs', /^dayjs$/),
];

const API_ORIGIN = process.env.KONNECTZ_API_ORIGIN ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '/api': API_ORIGIN,
      '/dev': API_ORIGIN,
      '/healthz': API_ORIGIN,
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rolldownOptions: {
      output: {
        codeSplitting: { groups: VENDOR_CHUNKS },
      },
    },
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    css: false,
    pool: 'threads',
    include: ['src/**/*.test.{ts,tsx}'],
    // jsdom renders of whole pages take seconds each on a loaded two-core machine (20 s timed out there).
    testTimeout: 60000,
  },
});
