import type { NodeProps } from '@xyflow/react';
import { DatePicker, Input, Select, TimePicker, Typography } from 'antd';
import dayjs from 'dayjs';
import { memo } from 'react';
import { useToast } from '../../../lib/useToast';
import { EVERY_HINT, isInteger, MONTH_DATES, MSG, SCHEDULE_KINDS, TIME_SPANS, TOAST_MS, WEEKDAYS } from '../../model/rules';
import type { FlowNode, ScheduleType, ScheduleValue, TimeSpan } from '../../model/types';
import { NodeCard } from '../card/NodeCard';
import { useNodeUpdate } from '../card/useNodeUpdate';

/**
 * The next runs of a tested schedule, from the api's 'Next runs: <iso>, <iso> (<zone>)': wall
 * times in the owner's time zone (kept as written, not moved to the browser's zone).
 */
export function nextRuns(message: string | undefined | null): { times: string[]; zone: string } | null {
  const m = /^Next runs?: (.+) \(([^()]+)\)$/.exec(message ?? '');
  if (!m) return null;
  const times = m[1].split(', ').map((t) => t.slice(0, 16).replace('T', ' '));
  return { times, zone: m[2] };
}

function NextRuns({ id, message }: { id: string; message: string | undefined }) {
  const runs = nextRuns(message);
  if (!runs) return null;
  return (
    <div className="kz-field" data-testid={`schedule-next-runs-${id}`}>
      <span className="kz-field-label">Next runs ({runs.zone})</span>
      <ul className="kz-next-runs">
        {runs.times.map((t) => (
          <li key={t}>{t}</li>
        ))}
      </ul>
    </div>
  );
}

/** Which inputs a schedule kind shows. */
export function scheduleInputs(kind: ScheduleType, span?: TimeSpan): { date: boolean; time: boolean; days: boolean; dates: boolean; every: boolean } {
  return {
    date: kind === 'Once',
    time: kind !== 'AtRegularIntervals' || span === 'Days',
    days: kind === 'DaysOfTheWeek',
    dates: kind === 'DaysOfTheMonth',
    every: kind === 'AtRegularIntervals',
  };
}

/** Scheduler: Once, Every day, Days of the week, Days of the month, At regular intervals. */
function SchedulerNodeView({ id, data, selected }: NodeProps<FlowNode>) {
  const { update } = useNodeUpdate(id);
  const toast = useToast();
  const value = (data.selectedValue as ScheduleValue | undefined) ?? { schedule_type: 'Everyday' };
  const set = (patch: Partial<ScheduleValue>, key?: string) => update({ selectedValue: { ...value, ...patch } }, key);
  const show = scheduleInputs(value.schedule_type, value.time_span);
  const [day, time] = value.schedule_type === 'Once' ? (value.schedule_time ?? ' ').split(' ') : ['', value.schedule_time ?? ''];
  return (
    <NodeCard id={id} data={data} selected={selected}>
      <div className="kz-field">
        <span className="kz-field-label">Event</span>
        <Select
          className="nodrag"
          value={value.schedule_type}
          onChange={(schedule_type: ScheduleType) => update({ selectedValue: { schedule_type, ...(schedule_type === 'AtRegularIntervals' ? { every: 5, time_span: 'Minutes' } : {}) } })}
          options={SCHEDULE_KINDS.map((k) => ({ ...k, 'data-testid': `schedule-kind-${k.value}` }))}
          data-testid={`schedule-type-${id}`}
        />
      </div>
      {show.every && (
        <div className="kz-field-row">
          <div className="kz-field">
            <span className="kz-field-label">Every</span>
            <Input
              className="nodrag"
              value={String(value.every ?? '')}
              onChange={(e) => {
                if (e.target.value && !isInteger(e.target.value)) void toast.warning(MSG.integerOnly, TOAST_MS / 1000);
                else set({ every: e.target.value }, 'every');
              }}
              data-testid={`schedule-every-${id}`}
            />
            {value.time_span && EVERY_HINT[value.time_span] && <Typography.Text type="secondary">{EVERY_HINT[value.time_span]}</Typography.Text>}
          </div>
          <div className="kz-field">
            <span className="kz-field-label">Interval</span>
            <Select
              className="nodrag"
              value={value.time_span}
              onChange={(time_span: TimeSpan) => set({ time_span })}
              options={TIME_SPANS.map((s) => ({ value: s, label: s }))}
              data-testid={`schedule-span-${id}`}
            />
          </div>
        </div>
      )}
      {show.days && (
        <div className="kz-field">
          <span className="kz-field-label">Days</span>
          <Select className="nodrag" mode="multiple" value={value.days ?? []} onChange={(days: string[]) => set({ days })} options={WEEKDAYS.map((d) => ({ value: d, label: d }))} data-testid={`schedule-days-${id}`} />
        </div>
      )}
      {show.dates && (
        <div className="kz-field">
          <span className="kz-field-label">Dates</span>
          <Select className="nodrag" mode="multiple" value={value.dates ?? []} onChange={(dates: number[]) => set({ dates })} options={MONTH_DATES.map((d) => ({ value: d, label: String(d) }))} data-testid={`schedule-dates-${id}`} />
        </div>
      )}
      <div className="kz-field-row">
        {show.date && (
          <div className="kz-field">
            <span className="kz-field-label">Date</span>
            <DatePicker
              className="nodrag"
              value={day ? dayjs(day) : null}
              minDate={dayjs()}
              onChange={(d) => set({ schedule_time: `${d ? d.format('YYYY-MM-DD') : ''} ${time || '09:00'}` })}
              data-testid={`schedule-date-${id}`}
            />
          </div>
        )}
        {show.time && (
          <div className="kz-field">
            <span className="kz-field-label">Time</span>
            <TimePicker
              className="nodrag"
              format="HH:mm"
              value={time ? dayjs(`2000-01-01 ${time}`) : null}
              onChange={(t) => {
                const hhmm = t ? t.format('HH:mm') : '';
                set({ schedule_time: value.schedule_type === 'Once' ? `${day || dayjs().format('YYYY-MM-DD')} ${hhmm}` : hhmm });
              }}
              data-testid={`schedule-time-${id}`}
            />
          </div>
        )}
      </div>
      {data.app_status.type === 'Success' && <NextRuns id={id} message={data.response_payload?.display_message} />}
    </NodeCard>
  );
}

export const SchedulerNode = memo(SchedulerNodeView);
