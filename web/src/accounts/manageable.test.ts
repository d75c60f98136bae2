import { describe, expect, it } from 'vitest';
import { isManageable, manageRefusal } from './manageable';

const slack = { id: 3, name: 'Slack', auth_type: 'OAuth2', app_type: 'api', provider: 'slack' };

describe('manageable', () => {
  it('lets api apps with an auth be managed anywhere on the canvas', () => {
    expect(isManageable(slack)).toBe(true);
    expect(isManageable(slack, 1)).toBe(true);
    expect(manageRefusal(slack, 2)).toBeNull();
  });

  it('refuses the webhook trigger, webhook_api apps, add-ons and apps without accounts', () => {
    const webhook = { id: 1, name: 'Webhook', auth_type: 'Token', app_type: 'WEBHOOK', provider: 'webhook' };
    expect(manageRefusal(webhook, 1)).toBe('Webhook is not manageable.');
    expect(manageRefusal(webhook, 2)).toBeNull();
    expect(manageRefusal({ ...slack, name: 'Hooks', app_type: 'webhook_api' })).toBe('Hooks is not manageable.');
    expect(manageRefusal({ ...slack, name: 'Formatter', app_type: 'ADD_ON' })).toBe('Formatter is not manageable.');
    expect(manageRefusal({ ...slack, name: 'Open Data', auth_type: null })).toBe('Open Data is not manageable.');
  });
});
