import type { FlowNodeData } from '../../model/types';
import { AddonText } from '../card/AddonFields';

/** Iterator: the following steps run once per item of a list (once per flow). */
export function IteratorBody({ id, data }: { id: string; data: FlowNodeData }) {
  return (
    <>
      <AddonText id={id} data={data} name="list" label="List" required />
      <AddonText id={id} data={data} name="separator" label="Separator (for text)" refs={false} />
    </>
  );
}
