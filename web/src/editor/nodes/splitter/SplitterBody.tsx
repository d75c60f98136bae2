import { Select } from 'antd';
import { SPLITTER_SEGMENTS } from '../../model/rules';
import type { FlowNodeData, KindData } from '../../model/types';
import { AddonText } from '../card/AddonFields';
import { useNodeUpdate } from '../card/useNodeUpdate';

/** Splitter: input, separator and the segment kept (First by default). */
export function SplitterBody({ id, data }: { id: string; data: FlowNodeData }) {
  const { updateAndReset } = useNodeUpdate(id);
  const config = (data as KindData<'splitter'>).inHouseAppConfig;
  const index = config?.segmentIndex ?? 0;
  return (
    <>
      <AddonText id={id} data={data} name="input" label="Input" required />
      <AddonText id={id} data={data} name="separator" label="Separator" refs={false} />
      <div className="kz-field">
        <span className="kz-field-label">Segment</span>
        <Select
          className="nodrag"
          value={index}
          onChange={(segmentIndex: number) => updateAndReset({ inHouseAppConfig: { ...config, segmentIndex } })}
          options={SPLITTER_SEGMENTS.map((s, i) => ({ value: i, label: s, 'data-testid': `segment-option-${i}` }))}
          data-testid={`splitter-segment-${id}`}
        />
      </div>
    </>
  );
}
