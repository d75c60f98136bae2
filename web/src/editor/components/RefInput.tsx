import { Mentions } from 'antd';
import { useMemo, useState } from 'react';
import { useEditor } from '../EditorContext';
import { upstreamNodes } from '../model/operations';
import { referenceOptions, stripMentionPrefix } from '../references';

interface Props {
  nodeId: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  testId?: string;
}

/**
 * A text field of a node; typing '@' lists the output keys of earlier nodes. Choosing one
 * replaces the '@…' typed at the caret by the reference, adding no space (`split=""`).
 */
export function RefInput({ nodeId, value, onChange, placeholder, testId }: Props) {
  const apps = useEditor((s) => s.apps);
  const [search, setSearch] = useState('');
  const upstream = useMemo(() => upstreamNodes(apps, nodeId), [apps, nodeId]);
  const options = useMemo(
    () => referenceOptions(upstream, search).map((o) => ({ ...o, 'data-testid': `ref-option-${o.value}` })),
    [upstream, search],
  );

  return (
    <Mentions
      className="nodrag nopan nowheel"
      prefix="@"
      split=""
      autoSize={{ minRows: 1, maxRows: 4 }}
      value={value}
      placeholder={placeholder}
      options={options}
      filterOption={false}
      notFoundContent={upstream.length ? 'Test the earlier steps to list their keys' : 'No earlier steps'}
      onSearch={(text) => setSearch(text)}
      onChange={(text) => onChange(stripMentionPrefix(text))}
      data-testid={testId}
    />
  );
}
