import { Button, Checkbox, InputNumber, Select, Space, Switch } from 'antd';
import { useState } from 'react';
import { Drawer } from '../../../lib/Drawer';
import { useEditorStoreApi } from '../../EditorContext';
import type { OnErrorSettings, RetryOn } from '../../model/types';

export const ON_ERROR_TITLE = 'On Error';
/** The api's bounds (konnectz_contracts.on_error): at most 10 retries of at most 300 s each. */
export const MAX_RETRIES = 10;
export const MAX_RETRY_DELAY_SECONDS = 300;

export const RETRY_ON: { value: RetryOn; label: string }[] = [
  { value: 'connection', label: 'Connection errors' },
  { value: 'timeout', label: 'Timeouts' },
  { value: 'server', label: 'Server errors (5xx)' },
  { value: 'rate_limited', label: 'Rate limited (429)' },
];

export const DEFAULT_ON_ERROR: OnErrorSettings = {
  retries: 0,
  backoff: 'exponential',
  delaySeconds: 2,
  maxDelaySeconds: 60,
  retryOn: RETRY_ON.map((r) => r.value),
  continueOnError: false,
};

/** Whether the node has an error policy worth showing (the header's button is highlighted then). */
export function hasOnError(value: OnErrorSettings | null | undefined): boolean {
  return Boolean(value && (value.retries > 0 || value.continueOnError));
}

/** What Save stores: nothing when the policy asks for nothing; null when Retry on is empty with retries. */
export function onErrorToSave(v: OnErrorSettings): OnErrorSettings | null | 'incomplete' {
  if (v.retries > 0 && v.retryOn.length === 0) return 'incomplete';
  if (!hasOnError(v)) return null;
  return { ...v, maxDelaySeconds: Math.max(v.maxDelaySeconds, v.delaySeconds) };
}

/** A step's error policy: retries (how many, the backoff, on which failures) and continue on error. */
export function OnErrorForm({ id, onDone }: { id: string; onDone?: () => void }) {
  const store = useEditorStoreApi();
  const saved = store.getState().apps.find((n) => n.id === id)?.data.onError;
  const [v, setV] = useState<OnErrorSettings>({ ...DEFAULT_ON_ERROR, ...(saved ?? {}) });
  const result = onErrorToSave(v);
  const save = () => {
    if (result === 'incomplete') return;
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { onError: result } });
    onDone?.();
  };
  const clear = () => {
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { onError: null } });
    setV(DEFAULT_ON_ERROR);
    onDone?.();
  };
  const retrying = v.retries > 0;
  return (
    <div className="kz-on-error nodrag" data-testid={`on-error-form-${id}`}>
      <div className="kz-field">
        <span className="kz-field-label">Retries</span>
        <InputNumber
          min={0}
          max={MAX_RETRIES}
          precision={0}
          value={v.retries}
          onChange={(n) => setV({ ...v, retries: n ?? 0 })}
          data-testid={`on-error-retries-${id}`}
        />
        <span className="kz-field-hint">Run the step again when it fails, up to this many times (0: never).</span>
      </div>
      {retrying && (
        <>
          <div className="kz-field">
            <span className="kz-field-label">Wait between tries</span>
            <Select
              value={v.backoff}
              onChange={(backoff: OnErrorSettings['backoff']) => setV({ ...v, backoff })}
              options={[
                { value: 'exponential', label: 'Doubling each time', 'data-testid': 'on-error-backoff-exponential' },
                { value: 'fixed', label: 'The same each time', 'data-testid': 'on-error-backoff-fixed' },
              ]}
              data-testid={`on-error-backoff-${id}`}
            />
          </div>
          <Space>
            <div className="kz-field">
              <span className="kz-field-label">First wait (seconds)</span>
              <InputNumber
                min={0}
                max={MAX_RETRY_DELAY_SECONDS}
                value={v.delaySeconds}
                onChange={(n) => setV({ ...v, delaySeconds: n ?? 0 })}
                data-testid={`on-error-delay-${id}`}
              />
            </div>
            {v.backoff === 'exponential' && (
              <div className="kz-field">
                <span className="kz-field-label">Longest wait (seconds)</span>
                <InputNumber
                  min={0}
                  max={MAX_RETRY_DELAY_SECONDS}
                  value={v.maxDelaySeconds}
                  onChange={(n) => setV({ ...v, maxDelaySeconds: n ?? 0 })}
                  data-testid={`on-error-max-delay-${id}`}
                />
              </div>
            )}
          </Space>
          <div className="kz-field">
            <span className="kz-field-label">Retry on</span>
            <Checkbox.Group value={v.retryOn} onChange={(values) => setV({ ...v, retryOn: values as RetryOn[] })} data-testid={`on-error-on-${id}`}>
              {RETRY_ON.map((r) => (
                <Checkbox key={r.value} value={r.value} data-testid={`on-error-on-${r.value}-${id}`}>
                  {r.label}
                </Checkbox>
              ))}
            </Checkbox.Group>
            <span className="kz-field-hint">
              Other errors (a 4xx other than 429, a missing field) are never retried. A Retry-After the other side
              sends is waited for. Each failed try is in the task log, and every try sends the same Idempotency-Key.
            </span>
            {result === 'incomplete' && (
              <span className="kz-field-error" data-testid={`on-error-incomplete-${id}`}>
                Choose at least one kind of error to retry.
              </span>
            )}
          </div>
        </>
      )}
      <div className="kz-field">
        <span className="kz-field-label">Continue on error</span>
        <Switch checked={v.continueOnError} onChange={(continueOnError) => setV({ ...v, continueOnError })} data-testid={`on-error-continue-${id}`} />
        <span className="kz-field-hint">
          When the step still fails, the run goes on: its output is {'{error: {message, status}}'}, so a Router after it
          can branch on it.
        </span>
      </div>
      <Space className="kz-delay-actions">
        <Button onClick={clear} data-testid={`on-error-clear-${id}`}>
          Clear
        </Button>
        <Button type="primary" onClick={save} disabled={result === 'incomplete'} data-testid={`on-error-save-${id}`}>
          Save
        </Button>
      </Space>
    </div>
  );
}

export function OnErrorDrawer({ id, open, onClose }: { id: string; open: boolean; onClose: () => void }) {
  return (
    <Drawer open={open} onClose={onClose} title={ON_ERROR_TITLE} size={420} destroyOnHidden>
      <OnErrorForm id={id} onDone={onClose} />
    </Drawer>
  );
}
