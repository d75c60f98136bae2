import { LinkOutlined } from '@ant-design/icons';
import { Mentions, Tag } from 'antd';
import { useMemo, useState } from 'react';
import { useEditor } from '../EditorContext';
import type { FlowNode } from '../model/types';
import { upstreamNodes } from '../model/operations';
import { findReferences, noReferenceText, referenceLabel, referenceOptions, stepLabel, stripMentionPrefix } from '../references';

interface Props {
  nodeId: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  testId?: string;
}

/**
 * The references of a field's text as chips ("Webhook › amount"); each chip's tooltip is the stored
 * template. A reference to a step that is no longer on the canvas shows red.
 */
export function RefChips({ apps, value, testId }: { apps: FlowNode[]; value: string; testId?: string }) {
  const refs = findReferences(value);
  if (refs.length === 0) return null;
  return (
    <div className="kz-ref-chips" data-testid={testId && `${testId}-refs`}>
      {refs.map((r) => {
        const missing = stepLabel(apps, r.nodeId) === undefined;
        return (
          <Tag
            key={r.raw}
            className="kz-ref-chip"
            color={missing ? 'error' : 'processing'}
            icon={<LinkOutlined />}
            title={missing ? `${r.raw} (this step is no longer in the flow)` : r.raw}
            data-ref={r.raw}
            data-testid="ref-chip"
          >
            {referenceLabel(apps, r.nodeId, r.path)}
          </Tag>
        );
      })}
    </div>
  );
}

/**
 * A text field of a node; typing '@' lists the output keys of earlier nodes that contain the typed
 * text. Choosing one replaces the '@…' typed at the caret by the reference, adding no space
 * (`split=""`). The text keeps the template; its references show as chips below the field.
 */
export function RefInput({ nodeId, value, onChange, placeholder, testId }: Props) {
  const apps = useEditor((s) => s.apps);
  const links = useEditor((s) => s.links);
  const [search, setSearch] = useState('');
  // Along the links in a flow with paths: a step on a path sees only what is upstream of it.
  const upstream = useMemo(() => upstreamNodes(apps, nodeId, links), [apps, nodeId, links]);
  const options = useMemo(
    () => referenceOptions(upstream, search, apps, links).map((o) => ({ ...o, title: o.value, 'data-testid': `ref-option-${o.value}` })),
    [upstream, search, apps, links],
  );

  return (
    <div className="kz-ref-input">
      <Mentions
        className="nodrag nopan nowheel"
        prefix="@"
        split=""
        autoSize={{ minRows: 1, maxRows: 4 }}
        value={value}
        placeholder={placeholder}
        options={options}
        filterOption={false}
        notFoundContent={<span data-testid="ref-none">{noReferenceText(upstream, search)}</span>}
        onSearch={(text) => setSearch(text)}
        onChange={(text) => onChange(stripMentionPrefix(text))}
        data-testid={testId}
      />
      <RefChips apps={apps} value={value} testId={testId} />
    </div>
  );
}
