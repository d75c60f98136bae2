import { describe, expect, it } from 'vitest';
import { applyOperation } from './model/operations';
import { apiApp, webhookApp } from './model/fixtures';
import { referenceOptions, stripMentionPrefix } from './references';

const flow = [
  { type: 'addTrigger' as const, app: webhookApp },
  { type: 'addAction' as const, app: apiApp },
].reduce(applyOperation, { apps: [], links: [] });

describe('references', () => {
  it('offers a free {{node.path}} reference for the typed path on each earlier node', () => {
    const [trigger] = flow.apps;
    expect(referenceOptions([trigger], 'customer.email').map((o) => o.value)).toEqual(['{{node-1.customer.email}}']);
    expect(referenceOptions([trigger], '')).toEqual([]);
    expect(referenceOptions([trigger], 'bad path!')).toEqual([]);
  });

  it('lists known outputs (configResponses) filtered by the search', () => {
    const trigger = {
      ...flow.apps[0],
      data: { ...flow.apps[0].data, configResponses: [{ label: 'Email', config_key: 'email' }, { label: 'Name', config_key: 'name' }] },
    };
    expect(referenceOptions([trigger], '').map((o) => o.value)).toEqual(['{{node-1.email}}', '{{node-1.name}}']);
    expect(referenceOptions([trigger], 'nam').map((o) => o.value)).toEqual(['{{node-1.name}}', '{{node-1.nam}}']);
  });

  it('stores references without the mention prefix', () => {
    expect(stripMentionPrefix('Hi @{{node-1.name}} at a@b.com')).toBe('Hi {{node-1.name}} at a@b.com');
  });
});
