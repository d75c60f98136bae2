import type { FlowNodeData } from '../../model/types';
import { ConfigSection } from '../card/ConfigSection';
import { EventAccountSection, needsAccount } from '../card/EventAccountSection';

/** A catalogue app's card body: event and account, then its configuration. */
export function AppNodeBody({ id, data }: { id: string; data: FlowNodeData }) {
  const ready = Boolean(data.selectedEvent) && (!needsAccount(data) || Boolean(data.selectedAccount));
  return (
    <>
      <EventAccountSection id={id} data={data} />
      <ConfigSection id={id} data={data} autoLoad={ready} />
    </>
  );
}
