import { describe, expect, it } from 'vitest';
import { applyOperation } from './model/operations';
import { apiApp, webhookApp } from './model/fixtures';
import type { FlowNode } from './model/types';
import { findReferences, noReferenceText, referenceLabel, referenceOptions, stepLabel, stripMentionPrefix } from './references';

const flow = [
  { type: 'addTrigger' as const, app: webhookApp },
  { type: 'addAction' as const, app: apiApp },
].reduce(applyOperation, { apps: [], links: [] });

const tested = (node: FlowNode, raw: unknown): FlowNode => ({
  ...node,
  data: { ...node.data, response_payload: { display_message: 'ok', raw_response: raw, konnect_activity_id: 1, konnect_id: 2, test_status: 'Success' } },
});

describe('references', () => {
  const trigger = tested(flow.apps[0], { email: 'a@b.c', amount: 12, customer: { name: 'Ada', tags: ['x', 'y'] } });

  it('lists every output key of the earlier nodes, in words ("Webhook › customer › name")', () => {
    const options = referenceOptions([trigger], '');
    expect(options.map((o) => o.value)).toEqual([
      '{{node-1.email}}',
      '{{node-1.amount}}',
      '{{node-1.customer.name}}',
      '{{node-1.customer.tags.0}}',
      '{{node-1.customer.tags.1}}',
    ]);
    expect(options[2].label).toBe('Webhook › customer › name');
  });

  it("'@em' offers only existing keys whose path contains the text, in any case; nothing is made up", () => {
    expect(referenceOptions([trigger], 'em').map((o) => o.value)).toEqual(['{{node-1.email}}']);
    expect(referenceOptions([trigger], 'EM').map((o) => o.value)).toEqual(['{{node-1.email}}']);
    expect(referenceOptions([trigger], 'customer.na').map((o) => o.value)).toEqual(['{{node-1.customer.name}}']);
    // A typed path that no step has is not offered (it used to be, on every earlier step).
    expect(referenceOptions([trigger], 'customer.email')).toEqual([]);
    // The app's name is no match for its keys.
    expect(referenceOptions([trigger], 'webhook')).toEqual([]);
    // An untested step with no declared fields has no keys to offer.
    expect(referenceOptions([flow.apps[0]], 'em')).toEqual([]);
    expect(noReferenceText([trigger], 'em ')).toBe("No field matches 'em'");
    expect(noReferenceText([flow.apps[0]], '')).toBe('Test the earlier steps to list their fields');
    expect(noReferenceText([], 'em')).toBe('No earlier steps');
  });

  it('offers the declared output fields of an untested step', () => {
    const declared: FlowNode = {
      ...flow.apps[0],
      data: { ...flow.apps[0].data, configResponses: [{ label: 'Email', config_key: 'email', additional: true } as never] },
    };
    expect(referenceOptions([declared], 'em').map((o) => o.label)).toEqual(['Webhook › email']);
  });

  it('names references by step and key path, numbering steps that share a name', () => {
    expect(findReferences('Hi {{node-1.customer.name}} and {{ node-2.output }} {{node-1.customer.name}} {{bad}}')).toEqual([
      { raw: '{{node-1.customer.name}}', nodeId: 'node-1', path: 'customer.name' },
      { raw: '{{ node-2.output }}', nodeId: 'node-2', path: 'output' },
    ]);
    expect(referenceLabel(flow.apps, 'node-1', 'amount')).toBe('Webhook › amount');
    expect(referenceLabel(flow.apps, 'node-9', 'amount')).toBe('node-9 › amount');
    const twins = applyOperation(flow, { type: 'addAction', app: apiApp });
    expect(stepLabel(twins.apps, 'node-3')).toBe('API Call (step 3)');
    expect(stepLabel(twins.apps, 'node-1')).toBe('Webhook');
  });

  it('stores references without the mention prefix', () => {
    expect(stripMentionPrefix('Hi @{{node-1.name}} at a@b.com')).toBe('Hi {{node-1.name}} at a@b.com');
  });
});
