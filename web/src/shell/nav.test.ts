import { describe, expect, it } from 'vitest';
import { activeNavKey, headingFor } from './nav';

describe('active navigation', () => {
  it.each([
    ['/dashboard', 'home'],
    ['/applications', 'applications'],
    ['/flows/home', 'flows'],
    ['/flows/12', 'flows'],
    ['/create', 'flows'],
    ['/create/5', 'flows'],
    ['/logs', 'history'],
    ['/approvals', 'approvals'],
    ['/chatflows', 'chatflows'],
    ['/agentflows', 'agentflows'],
    ['/tools', 'tools'],
    ['/account/profile', null],
  ])('%s highlights %s', (path, key) => {
    expect(activeNavKey(path)).toBe(key);
  });

  it('gives the page heading', () => {
    expect(headingFor('/dashboard')).toBe('DASHBOARD');
    expect(headingFor('/logs')).toBe('FLOW HISTORY');
    expect(headingFor('/approvals')).toBe('PENDING APPROVALS');
  });
});
