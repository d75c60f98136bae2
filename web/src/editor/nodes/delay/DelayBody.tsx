import { Typography } from 'antd';
import type { FlowNodeData } from '../../model/types';
import { DELAY_TITLE, DelayForm } from '../card/DelayDrawer';

/** The Delay add-on: the same parameters as Set Delay, on the card itself. */
export function DelayBody({ id, data }: { id: string; data: FlowNodeData }) {
  return (
    <>
      <Typography.Text strong>{DELAY_TITLE}</Typography.Text>
      <DelayForm key={data.delayReady ? 'set' : 'unset'} id={id} />
    </>
  );
}
