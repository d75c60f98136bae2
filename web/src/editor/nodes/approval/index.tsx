/** The Approval card: who approves, what they read, the timeout and what happens then (its definition is kind.tsx). */
import type { NodeProps } from '@xyflow/react';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { AddonText } from '../card/AddonFields';
import { NodeCard } from '../card/NodeCard';
import { WaitTimeout } from '../card/WaitTimeout';
import { APPROVAL_DEFAULT_UNIT, MAX_APPROVERS } from './kind';

function ApprovalNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <AddonText id={id} data={data} name="approvers" label="Approvers" required />
      <span className="kz-field-hint" data-testid={`approval-approvers-hint-${id}`}>
        E-mails of the flow&apos;s owner or of members of the owner&apos;s team, separated by commas (at most {MAX_APPROVERS}); anyone else
        fails the step. Each is mailed an Approve and a Reject link and sees the request on the <a href="/approvals" target="_blank" rel="noreferrer">Approvals</a> page; the
        first decision counts.
      </span>
      <AddonText id={id} data={data} name="message" label="Message" />
      <span className="kz-field-hint">What the approvers read, for example: Ship order {'{{'}node-1.order{'}}'}?</span>
      <WaitTimeout id={id} data={data} defaultUnit={APPROVAL_DEFAULT_UNIT} nothing="decision" />
      <span className="kz-field-hint">
        Later steps use {'{{'}
        {id}.decision{'}}'} (approved or rejected), {'{{'}
        {id}.approved{'}}'} and {'{{'}
        {id}.decided_by{'}}'}. Test &amp; Review mails nobody: it answers a sample approval.
      </span>
    </NodeCard>
  );
}

export default memo(ApprovalNodeView);
