/** The Wait for a Call card: the resume URL to hand out, the timeout and what happens then (its definition is kind.tsx). */
import type { NodeProps } from '@xyflow/react';
import { Typography } from 'antd';
import { memo } from 'react';
import type { FlowNode } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { WaitTimeout } from '../card/WaitTimeout';
import { WAIT_DEFAULT_UNIT } from './kind';

/** The reference that earlier steps use to send the link (the compiler's one forward reference). */
export const resumeUrlReference = (id: string) => `{{${id}.resume_url}}`;

function WaitNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const reference = resumeUrlReference(id);
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field" data-testid={`wait-resume-${id}`}>
        <span className="kz-field-label">Resume URL</span>
        <Typography.Text code copyable={{ text: reference, tooltips: ['Copy the reference', 'Copied'] }} data-testid={`wait-resume-ref-${id}`}>
          {reference}
        </Typography.Text>
        <span className="kz-field-hint">
          Put this reference in a step <b>before</b> this one (an e-mail, a message, an API call) to send the link to whoever answers. A POST
          or PUT to the link resumes the run once: its JSON, form or query data becomes this step&apos;s output ({'{{'}
          {id}.&lt;field&gt;{'}}'} in later steps). A second call is told the link was used (410); opening it (GET) changes nothing.
        </span>
      </div>
      <WaitTimeout id={id} data={data} defaultUnit={WAIT_DEFAULT_UNIT} nothing="call" />
    </NodeCard>
  );
}

export default memo(WaitNodeView);
