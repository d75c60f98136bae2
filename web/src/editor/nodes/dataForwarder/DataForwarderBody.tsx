import { KeyValueList } from '../../components/KeyValueList';
import type { FlowNodeData } from '../../model/types';
import { useNodeUpdate } from '../card/useNodeUpdate';

/** Data forwarder: a list of keys, each taking a value (usually a reference) from earlier steps. */
export function DataForwarderBody({ id, data }: { id: string; data: FlowNodeData }) {
  const { update } = useNodeUpdate(id);
  const keys = data.keyList ?? [];
  return <KeyValueList nodeId={id} label="Keys" items={keys} onChange={(keyList) => update({ keyList }, `keys-${keyList.length}`)} testId={`forward-key-${id}`} />;
}
