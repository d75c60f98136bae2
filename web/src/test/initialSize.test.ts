import { describe, expect, it } from 'vitest';
import { BUDGET_KB, initialScripts } from '../../scripts/check-initial-size.mjs';

describe('the initial script budget (scripts/check-initial-size.mjs)', () => {
  it('counts the entry and its modulepreloads, not stylesheets or icons', () => {
    const html = `<!doctype html><html><head>
      <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
      <script type="module" crossorigin src="/assets/index-A.js"></script>
      <link rel="modulepreload" crossorigin href="/assets/react-B.js">
      <link rel="modulepreload" crossorigin href="/assets/react-B.js">
      <link rel="stylesheet" crossorigin href="/assets/index-C.css">
      <link crossorigin href="/assets/query-D.js" rel="modulepreload">
    </head><body><div id="root"></div></body></html>`;
    expect(initialScripts(html)).toEqual(['/assets/index-A.js', '/assets/react-B.js', '/assets/query-D.js']);
  });

  it('is 250 kB gzipped', () => {
    expect(BUDGET_KB).toBe(250);
  });
});
