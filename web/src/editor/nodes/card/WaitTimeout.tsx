/**
 * The timeout of a step that waits for a decision (Wait for a Call, Approval; docs/waits.md): how
 * long at most, in which unit, and what the run does when nothing comes in time. Stored in
 * `selectedAddonsValue` as the api's compilers read them (`timeout`, `timeout_unit`, `on_timeout`).
 */
import { InputNumber, Select, Space } from 'antd';
import type { FlowNodeData } from '../../model/types';
import { useNodeUpdate } from './useNodeUpdate';

export const TIMEOUT_UNITS = [
  { value: 'seconds', label: 'Seconds', seconds: 1 },
  { value: 'minutes', label: 'Minutes', seconds: 60 },
  { value: 'hours', label: 'Hours', seconds: 3600 },
  { value: 'days', label: 'Days', seconds: 86_400 },
] as const;

/** A wait lasts at most 366 days (konnectz_contracts.waits.MAX_WAIT). */
export const MAX_WAIT_DAYS = 366;

export type OnTimeout = 'continue' | 'stop' | 'fail';

/** What the run does at the timeout, in words. */
export const ON_TIMEOUT_OPTIONS: readonly { value: OnTimeout; label: string }[] = [
  { value: 'continue', label: 'Go on (output: timed_out true)' },
  { value: 'stop', label: 'Stop the run (no error)' },
  { value: 'fail', label: 'Stop the run with an error' },
];

/** The timeout's fields as stored, with their defaults. */
export function timeoutOf(data: FlowNodeData, defaultUnit: string): { timeout: unknown; unit: string; onTimeout: string } {
  const values = data.selectedAddonsValue ?? {};
  return {
    timeout: values.timeout,
    unit: typeof values.timeout_unit === 'string' ? values.timeout_unit : defaultUnit,
    onTimeout: typeof values.on_timeout === 'string' ? values.on_timeout : 'continue',
  };
}

/** Why the timeout cannot be used (the api refuses the same at publish), or null. */
export function timeoutProblem(data: FlowNodeData, defaultUnit: string): string | null {
  const { timeout, unit } = timeoutOf(data, defaultUnit);
  const n = typeof timeout === 'number' ? timeout : Number(String(timeout ?? '').trim());
  if (timeout === undefined || timeout === null || String(timeout).trim() === '') return 'Enter the timeout: how long the run waits at most';
  if (!Number.isInteger(n) || n < 1) return 'The timeout is a whole number of at least 1';
  const per = TIMEOUT_UNITS.find((u) => u.value === unit)?.seconds ?? 3600;
  if (n * per > MAX_WAIT_DAYS * 86_400) return `A wait lasts at most ${MAX_WAIT_DAYS} days`;
  return null;
}

/** "2 hours", "1 day": the timeout in words for the card's summary (null when not set). */
export function timeoutWords(data: FlowNodeData, defaultUnit: string): string | null {
  if (timeoutProblem(data, defaultUnit)) return null;
  const { timeout, unit } = timeoutOf(data, defaultUnit);
  const n = Number(timeout);
  return `${n} ${n === 1 ? unit.replace(/s$/, '') : unit}`;
}

/** Timeout, unit and what happens at the timeout, on one card. */
export function WaitTimeout({ id, data, defaultUnit, nothing }: { id: string; data: FlowNodeData; defaultUnit: string; nothing: string }) {
  const { update } = useNodeUpdate(id);
  const { timeout, unit, onTimeout } = timeoutOf(data, defaultUnit);
  const set = (key: string, value: unknown) => update((d) => ({ selectedAddonsValue: { ...(d.selectedAddonsValue ?? {}), [key]: value } }), `wait-${key}`);
  const shown = timeout === undefined || timeout === null || timeout === '' ? null : Number(timeout);
  return (
    <>
      <div className="kz-field">
        <span className="kz-field-label">
          Timeout<span className="kz-required">*</span>
        </span>
        <Space.Compact block>
          <InputNumber
            className="nodrag"
            min={1}
            precision={0}
            style={{ width: '50%' }}
            value={shown !== null && Number.isFinite(shown) ? shown : null}
            onChange={(v) => set('timeout', v ?? '')}
            placeholder="How long at most"
            data-testid={`wait-timeout-${id}`}
          />
          <Select
            className="nodrag"
            style={{ width: '50%' }}
            value={unit}
            onChange={(v: string) => set('timeout_unit', v)}
            options={TIMEOUT_UNITS.map((u) => ({ value: u.value, label: u.label, 'data-testid': `wait-unit-option-${u.value}` }))}
            data-testid={`wait-unit-${id}`}
          />
        </Space.Compact>
        <span className="kz-field-hint">At most {MAX_WAIT_DAYS} days. The run holds nothing while it waits.</span>
      </div>
      <div className="kz-field">
        <span className="kz-field-label">When no {nothing} comes in time</span>
        <Select
          className="nodrag"
          value={onTimeout}
          onChange={(v: string) => set('on_timeout', v)}
          options={ON_TIMEOUT_OPTIONS.map((o) => ({ ...o, 'data-testid': `wait-on-timeout-option-${o.value}` }))}
          data-testid={`wait-on-timeout-${id}`}
        />
      </div>
    </>
  );
}
