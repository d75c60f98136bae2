#!/usr/bin/env node
// The initial script's budget: what a browser must download before the first screen shows, i.e. the
// entry script of dist/index.html plus every script it preloads (<link rel="modulepreload">),
// measured gzipped. Fails above the budget with the figures; run after `vite build` (make web-check
// depends on the build, so it reads a fresh one). Reads dist/ only, writes nothing.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const BUDGET_KB = 250; // gzipped, 1 kB = 1000 bytes (as Vite reports sizes)

/** The script URLs index.html loads up front: module entries and modulepreloads, in order. */
export function initialScripts(html) {
  const urls = [];
  for (const tag of html.match(/<(script|link)\b[^>]*>/gi) ?? []) {
    const attr = (name) => tag.match(new RegExp(`\\s${name}\\s*=\\s*["']([^"']*)["']`, 'i'))?.[1];
    if (/^<script/i.test(tag) && attr('src')) urls.push(attr('src'));
    else if (/^<link/i.test(tag) && attr('rel')?.toLowerCase() === 'modulepreload' && attr('href'))
      urls.push(attr('href'));
  }
  return [...new Set(urls)];
}

function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const dist = resolve(process.argv[2] ?? join(here, '..', 'dist'));
  const index = join(dist, 'index.html');
  if (!existsSync(index)) {
    console.error(`initial script: ${index} is missing; build the web app first (make web-build)`);
    return 1;
  }
  const scripts = initialScripts(readFileSync(index, 'utf8')).filter((url) => !/^(https?:)?\/\//.test(url));
  if (scripts.length === 0) {
    console.error(`initial script: no script found in ${index}`);
    return 1;
  }
  let raw = 0;
  let gzipped = 0;
  const rows = [];
  for (const url of scripts) {
    const body = readFileSync(join(dist, url.replace(/^\//, '')));
    const gz = gzipSync(body, { level: 9 }).length;
    raw += body.length;
    gzipped += gz;
    rows.push(`  ${url}  ${(body.length / 1000).toFixed(1)} kB, ${(gz / 1000).toFixed(1)} kB gzipped`);
  }
  const total = `${(gzipped / 1000).toFixed(1)} kB gzipped (${(raw / 1000).toFixed(1)} kB raw, ${scripts.length} files)`;
  if (gzipped > BUDGET_KB * 1000) {
    console.error(`initial script: ${total} is over its budget of ${BUDGET_KB} kB gzipped:\n${rows.join('\n')}`);
    console.error('Load the new code lazily (a route, a drawer) or split it off (build.rolldownOptions in vite.config.ts).');
    return 1;
  }
  console.log(`initial script: ${total}, budget ${BUDGET_KB} kB`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
