import { describe, expect, it } from 'vitest';
import { accountName, flowLabel, nodeCardName, pickerName, statusLabel } from './names';

describe('name truncation', () => {
  it('cuts picker names longer than 9 to 7 plus "..."', () => {
    expect(pickerName('Webhook')).toBe('Webhook');
    expect(pickerName('123456789')).toBe('123456789');
    expect(pickerName('1234567890')).toBe('1234567...');
    expect(pickerName('Google Sheets')).toBe('Google ...');
  });

  it('cuts node card names longer than 13 to 11 plus ".."', () => {
    expect(nodeCardName('1234567890123')).toBe('1234567890123');
    expect(nodeCardName('12345678901234')).toBe('12345678901..');
    expect(nodeCardName('API Call')).toBe('API Call');
  });

  it('cuts account names beyond 10', () => {
    expect(accountName('0123456789')).toBe('0123456789');
    expect(accountName('0123456789ab')).toBe('0123456789...');
  });
});

describe('flowLabel', () => {
  it('uses the flow name when set', () => {
    expect(flowLabel({ konnect_name: 'My flow', left_app: { name: 'Webhook' } })).toBe('My flow');
  });

  it('joins app names with dashes when the flow has no name', () => {
    expect(
      flowLabel({ konnect_name: '', left_app: { name: 'Webhook' }, right_apps: [{ app_name: 'API Call' }, { app_name: 'Slack' }] }),
    ).toBe('Webhook-API Call-Slack');
    expect(flowLabel({ konnect_name: null, left_app: null, right_apps: [{ app_name: 'API Call' }] })).toBe('API Call');
    expect(flowLabel({ konnect_name: '   ', left_app: { name: 'Webhook' } })).toBe('Webhook');
  });
});

describe('statusLabel', () => {
  it('shows Draft as Unpublished', () => {
    expect(statusLabel('Draft')).toBe('Unpublished');
    expect(statusLabel('Published')).toBe('Published');
  });
});
