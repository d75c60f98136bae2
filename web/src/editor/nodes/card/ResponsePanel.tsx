import { Button, Input, Segmented, Typography } from 'antd';
import { useState } from 'react';
import { LONG_TEXT, responseEntries, RESPONSE_PREVIEW } from '../../model/rules';
import type { FlowNodeData } from '../../model/types';

/** How many entries the summary shows, and the '+N more' count. */
export function previewCounts(total: number, expanded: boolean): { shown: number; more: number } {
  if (expanded || total <= RESPONSE_PREVIEW) return { shown: total, more: 0 };
  return { shown: RESPONSE_PREVIEW, more: total - RESPONSE_PREVIEW };
}

/** The test response: key-value or json view; 3 entries then '+N more'; long text multi-line. */
export function ResponsePanel({ id, data }: { id: string; data: FlowNodeData }) {
  const [view, setView] = useState<'Key-Value' | 'JSON'>('Key-Value');
  const [expanded, setExpanded] = useState(false);
  const payload = data.response_payload;
  if (!payload || data.app_status.type !== 'Success') return null;
  const entries = responseEntries(payload.raw_response);
  const { shown, more } = previewCounts(entries.length, expanded);
  return (
    <div className="kz-response nodrag nowheel" data-testid={`response-${id}`}>
      <div className="kz-response-head">
        <span className="kz-field-label">Response</span>
        <Segmented
          size="small"
          options={['Key-Value', 'JSON']}
          value={view}
          onChange={(v) => setView(v as 'Key-Value' | 'JSON')}
          data-testid={`response-view-${id}`}
        />
      </div>
      {view === 'JSON' ? (
        <pre className="kz-response-json" data-testid={`response-json-${id}`}>
          {JSON.stringify(payload.raw_response, null, 2)}
        </pre>
      ) : entries.length === 0 ? (
        <Typography.Text type="secondary">{payload.display_message}</Typography.Text>
      ) : (
        <>
          {entries.slice(0, shown).map((e) => (
            <div className="kz-response-row" key={e.key} data-testid={`response-row-${id}`}>
              <span className="kz-response-key">{e.key}</span>
              {e.value.length > LONG_TEXT ? (
                <Input.TextArea readOnly value={e.value} autoSize={{ minRows: 2, maxRows: 5 }} data-testid="response-multiline" />
              ) : (
                <Input readOnly value={e.value} />
              )}
            </div>
          ))}
          {more > 0 && (
            <Button type="link" size="small" onClick={() => setExpanded(true)} data-testid={`response-more-${id}`}>
              +{more} more
            </Button>
          )}
        </>
      )}
    </div>
  );
}
