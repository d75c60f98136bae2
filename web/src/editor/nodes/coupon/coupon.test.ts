import { describe, expect, it } from 'vitest';
import { toCanvasJson } from '../../model/canvas';
import { addOn, webhookApp } from '../../model/fixtures';
import { applyOperation } from '../../model/operations';
import { MSG } from '../../model/rules';
import type { Flow } from '../../model/types';
import { testBlocker } from '../card/useNodeTest';
import coupon from './kind';

const empty: Flow = { apps: [], links: [] };

describe('the coupon kind', () => {
  it('is added as a Coupon node with its event and an empty expiry, saved under the same names', () => {
    const flow = applyOperation(applyOperation(empty, { type: 'addTrigger', app: webhookApp }), { type: 'addAction', app: addOn('coupon', 'Coupon') });
    const node = flow.apps[1];
    expect(node.type).toBe('Coupon');
    expect(node.data.selectedEvent).toEqual({ id: 'generate_coupon', name: 'Generate Coupon' });
    const saved = toCanvasJson(flow, 'f').apps[1];
    expect(saved.type).toBe('Coupon');
    expect(saved.data.inHouseAppConfig).toEqual({ coupon: { expiryNum: '', duration: 'Days' } });
  });

  it('refuses a test without an expiry number', () => {
    const flow = applyOperation(applyOperation(empty, { type: 'addTrigger', app: webhookApp }), { type: 'addAction', app: addOn('coupon', 'Coupon') });
    const node = flow.apps[1];
    expect(testBlocker(flow.apps, null, node)).toBe(MSG.invalidExpiry);
    expect(coupon.testBlocker?.({ ...node.data, inHouseAppConfig: { coupon: { expiryNum: '3', duration: 'Days' } } })).toBeNull();
  });
});
