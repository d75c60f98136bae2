/** The coupon's card: an expiry number and unit in the NodeCard (its definition is kind.ts). */
import type { NodeProps } from '@xyflow/react';
import { Input, Select, Space } from 'antd';
import { memo } from 'react';
import { useToast } from '../../../lib/useToast';
import { isInteger, MSG, TOAST_MS } from '../../model/rules';
import type { FlowNode, KindData } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';
import { COUPON_UNITS, type CouponConfig } from './kind';

/** Coupon: a code with an expiry number and unit (Days by default). */
function CouponNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { updateAndReset } = useNodeUpdate(id);
  const toast = useToast();
  const config = (data as KindData<'coupon'>).inHouseAppConfig;
  const coupon = config?.coupon ?? { expiryNum: '', duration: 'Days' };
  const set = (patch: Partial<CouponConfig>) => updateAndReset({ inHouseAppConfig: { ...config, coupon: { ...coupon, ...patch } } });
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <span className="kz-field-label">Expiry</span>
      <Space.Compact block>
        <Input
          className="nodrag"
          placeholder="Expiry number"
          value={coupon.expiryNum}
          onChange={(e) => {
            if (e.target.value && !isInteger(e.target.value)) void toast.warning(MSG.integerOnly, TOAST_MS / 1000);
            else set({ expiryNum: e.target.value });
          }}
          data-testid={`coupon-expiry-${id}`}
        />
        <Select
          className="nodrag"
          style={{ minWidth: 140 }}
          value={coupon.duration || 'Days'}
          onChange={(duration: string) => set({ duration })}
          options={COUPON_UNITS.map((u) => ({ value: u, label: u }))}
          data-testid={`coupon-unit-${id}`}
        />
      </Space.Compact>
    </NodeCard>
  );
}

export const CouponNode = memo(CouponNodeView);

export default CouponNode;
