/** The coupon add-on: its data and its definition (its card is index.tsx; one kind = one folder). */
import type { components } from '../../../api/schema';
import type { KindDefinition } from '../../kinds';
import type { Narrow } from '../../model/types';
import { MSG } from '../../model/rules';

export const COUPON_UNITS = ['Days', 'Week', 'Months', 'Years'] as const;

/** The coupon's expiry: a number and a unit (stored under inHouseAppConfig.coupon; the api's CouponConfig). */
export type CouponConfig = Narrow<components['schemas']['CouponConfig'], { expiryNum: string; duration: string }>;

export interface CouponData {
  inHouseAppConfig?: { coupon?: CouponConfig };
}

/** The coupon add-on: a code with an expiry number and unit (Days by default). */
const coupon: KindDefinition<'coupon'> = {
  kind: 'coupon',
  providers: ['coupon'],
  nodeType: 'Coupon',
  label: { name: 'Coupon', description: 'Generates a coupon code with an expiry.' },
  fixedEvent: { id: 'generate_coupon', name: 'Generate Coupon' },
  initialData: () => ({ inHouseAppConfig: { coupon: { expiryNum: '', duration: 'Days' } } }),
  testBlocker: (data) => (String(data.inHouseAppConfig?.coupon?.expiryNum ?? '').trim() ? null : MSG.invalidExpiry),
};

export default coupon;

declare module '../../model/types' {
  interface NodeKindMap {
    Coupon: true;
  }
  interface KindDataMap {
    coupon: CouponData;
  }
}
