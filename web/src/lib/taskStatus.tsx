/** A run's status in words and colours: the same everywhere (flows list, task logs, history, dashboard). */
import { Space, Tag, Tooltip } from 'antd';
import type { TaskLogType } from '../api/models';

export interface StatusLook {
  word: string;
  color: string;
  hint: string;
}

export const TASK_STATUS: Record<TaskLogType, StatusLook> = {
  SUCCESS: { word: 'Success', color: 'green', hint: 'Every step ran' },
  FILTERED: { word: 'Stopped by filter', color: 'gold', hint: "A filter's conditions did not pass; the later steps did not run" },
  ERROR: { word: 'Error', color: 'red', hint: 'A step failed' },
  IN_DOUBT: {
    word: 'In doubt',
    color: 'volcano',
    hint: 'The runner stopped while a step ran; it was not run again. Check the target, then replay if needed',
  },
  REFUSED: { word: 'Refused', color: 'magenta', hint: 'Refused before any step ran (no tasks left)' },
  CANCELLED: { word: 'Cancelled', color: 'purple', hint: 'Someone cancelled the run; the steps before ran' },
};

/** Statuses of one step only (never of a whole run). */
export const STEP_STATUS: Record<string, StatusLook> = {
  SKIPPED: { word: 'Skipped', color: 'purple', hint: 'Its path was not chosen (or stopped): the step did not run' },
};

/** The look of a status; an unknown value shows as itself, grey. */
export function statusLook(status: string): StatusLook {
  return TASK_STATUS[status as TaskLogType] ?? STEP_STATUS[status] ?? { word: status, color: 'default', hint: status };
}

/** History and task-log filter options: ERROR takes every failed run (in doubt and refused too). */
export const STATUS_FILTER_OPTIONS: { value: TaskLogType; label: string }[] = [
  { value: 'SUCCESS', label: 'Success' },
  { value: 'FILTERED', label: 'Stopped by filter' },
  { value: 'ERROR', label: 'Error' },
  { value: 'IN_DOUBT', label: 'In doubt' },
  { value: 'REFUSED', label: 'Refused' },
  { value: 'CANCELLED', label: 'Cancelled' },
];

export function TaskStatusTag({ status, testId }: { status: string; testId?: string }) {
  const look = statusLook(status);
  return (
    <Tooltip title={look.hint}>
      <Tag color={look.color} data-testid={testId} data-status={status}>
        {look.word}
      </Tag>
    </Tooltip>
  );
}

export interface RunCounts {
  success_task_count: number;
  error_task_count: number;
  filtered_task_count?: number;
}

/** A flow's run counts as coloured tags with words: "3 success", "1 stopped by filter", "2 failed". */
export function RunCountTags({ counts, testId }: { counts: RunCounts; testId?: string }) {
  const filtered = counts.filtered_task_count ?? 0;
  return (
    <Space size={4} wrap data-testid={testId}>
      <Tag color="green" data-testid={testId && `${testId}-success`}>{`${counts.success_task_count} success`}</Tag>
      {filtered > 0 ? (
        <Tag color="gold" data-testid={testId && `${testId}-filtered`}>{`${filtered} stopped by filter`}</Tag>
      ) : null}
      <Tag color={counts.error_task_count > 0 ? 'red' : 'default'} data-testid={testId && `${testId}-error`}>
        {`${counts.error_task_count} failed`}
      </Tag>
    </Space>
  );
}
