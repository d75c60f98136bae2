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

  it('lists every output key of the earlier nodes from their test responses, filtered by the search', () => {
    const trigger = {
      ...flow.apps[0],
      data: {
        ...flow.apps[0].data,
        response_payload: {
          display_message: 'ok',
          raw_response: { email: 'a@b.c', customer: { name: 'Ada', tags: ['x', 'y'] } },
          konnect_activity_id: 1,
          konnect_id: 2,
          test_status: 'Success',
        },
      },
    };
    expect(referenceOptions([trigger], '').map((o) => o.value)).toEqual([
      '{{node-1.email}}',
      '{{node-1.customer.name}}',
      '{{node-1.customer.tags.0}}',
      '{{node-1.customer.tags.1}}',
    ]);
    expect(referenceOptions([trigger], 'nam').map((o) => o.value)).toEqual(['{{node-1.customer.name}}', '{{node-1.nam}}']);
  });

  it('stores references without the mention prefix', () => {
    expect(stripMentionPrefix('Hi @{{node-1.name}} at a@b.com')).toBe('Hi {{node-1.name}} at a@b.com');
  });
});
