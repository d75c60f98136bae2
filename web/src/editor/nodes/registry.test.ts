import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kindCards, nodeTypes } from './nodeTypes';
import { addRefusal, isTriggerOnly, kindFolders, kindForApp, kinds } from './registry';

/** Folders under nodes/ that hold shared parts, not a kind. */
const SHARED = new Set(['card']);
const here = dirname(fileURLToPath(import.meta.url));

describe('kind registry', () => {
  it('finds every kind folder (each has a kind.ts(x) exporting its definition and an index.ts(x) exporting its card)', () => {
    const folders = readdirSync(here, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !SHARED.has(e.name))
      .map((e) => e.name)
      .sort();
    for (const f of folders) expect(existsSync(join(here, f, 'kind.ts')) || existsSync(join(here, f, 'kind.tsx')), f).toBe(true);
    expect([...kindFolders].sort()).toEqual(folders);
    // A definition's kind is its folder's name.
    expect(kinds.map((k) => k.kind).sort()).toEqual(folders);
    // A folder with a card (index.ts(x)) has it found, and it is a component.
    const withCard = folders.filter((f) => existsSync(join(here, f, 'index.ts')) || existsSync(join(here, f, 'index.tsx')));
    expect([...kindCards.keys()].sort()).toEqual(withCard);
    for (const [f, card] of kindCards) expect(card, f).toBeTruthy();
    // A definition carries no card (the registry never imports one).
    for (const k of kinds) expect('component' in k, k.kind).toBe(false);
  });

  it('handles every provider by exactly one definition, and has one general trigger and one general action', () => {
    const seen = new Map<string, string[]>();
    for (const k of kinds) for (const p of [...k.providers, ...(k.legacyProviders ?? [])]) seen.set(p, [...(seen.get(p) ?? []), k.kind]);
    const twice = [...seen].filter(([, owners]) => owners.length !== 1);
    expect(twice).toEqual([]);
    for (const p of ['webhook', 'api', 'data_forwarder', 'formatter', 'generator', 'conditioner', 'filter', 'scheduler', 'form_input', 'coupon', 'splitter', 'iterator', 'delay'])
      expect(seen.has(p), p).toBe(true);
    expect(kinds.filter((k) => k.general === 'trigger')).toHaveLength(1);
    expect(kinds.filter((k) => k.general === 'action')).toHaveLength(1);
    expect(kindForApp('slack', true).general).toBe('trigger');
    expect(kindForApp('slack', false).general).toBe('action');
  });

  it('registers a React Flow component for every node type a kind uses', () => {
    for (const k of kinds) expect(nodeTypes[k.nodeType], k.kind).toBeTruthy();
    expect(Object.keys(nodeTypes).sort()).toEqual(
      ['ActionNode', 'Api', 'Coupon', 'Filter', 'FormInput', 'Formatter', 'Generator', 'InHouse', 'Scheduler', 'TriggerNode', 'WebhookInner', 'router', 'join'].sort(),
    );
  });

  it('answers the add-action rules from the definitions (trigger-only add-ons, the iterator once)', () => {
    expect(['scheduler', 'form_input', 'webhook'].every(isTriggerOnly)).toBe(true);
    expect(isTriggerOnly('coupon')).toBe(false);
    expect(addRefusal([], 'iterator')).toBeNull();
  });
});
