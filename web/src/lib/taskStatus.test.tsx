import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { KonnectListItem } from '../api/models';
import { TriggerCell } from '../pages/flows/FlowsPage';
import { RunCountTags, STATUS_FILTER_OPTIONS, statusLook, TASK_STATUS, TaskStatusTag } from './taskStatus';

const flow = (extra: Partial<KonnectListItem>): KonnectListItem => ({
  id: 3,
  konnect_name: 'F',
  status: 'Published',
  created_at: '2026-06-01T10:00:00Z',
  success_task_count: 0,
  error_task_count: 0,
  filtered_task_count: 0,
  left_app: { name: 'Webhook' },
  right_apps: [],
  webhook_url: 'http://127.0.0.1:8081/hooks/abc',
  trigger_kind: 'webhook',
  schedule: null,
  draft_pending: false,
  folder_id: null,
  phase: null,
  ...extra,
});

describe('task statuses in words and colours', () => {
  it('gives every status of the api a word and a colour of its own', () => {
    expect(Object.keys(TASK_STATUS).sort()).toEqual(['CANCELLED', 'ERROR', 'FILTERED', 'IN_DOUBT', 'REFUSED', 'SUCCESS']);
    const colours = Object.values(TASK_STATUS).map((l) => l.color);
    expect(new Set(colours).size).toBe(colours.length);
    expect(statusLook('FILTERED')).toMatchObject({ word: 'Stopped by filter', color: 'gold' });
    expect(statusLook('SUCCESS').word).toBe('Success');
    expect(statusLook('SOMETHING')).toMatchObject({ word: 'SOMETHING', color: 'default' });
    expect(STATUS_FILTER_OPTIONS.map((o) => o.value)).toEqual(['SUCCESS', 'FILTERED', 'ERROR', 'IN_DOUBT', 'REFUSED', 'CANCELLED']);
  });

  it('labels a filtered run as such, not as Success', () => {
    render(<TaskStatusTag status="FILTERED" testId="tag" />);
    expect(screen.getByTestId('tag')).toHaveTextContent('Stopped by filter');
    expect(screen.getByTestId('tag').className).toContain('gold');
  });

  it('counts runs by outcome in words', () => {
    render(<RunCountTags counts={{ success_task_count: 3, error_task_count: 1, filtered_task_count: 2 }} testId="c" />);
    expect(screen.getByTestId('c-success')).toHaveTextContent('3 success');
    expect(screen.getByTestId('c-filtered')).toHaveTextContent('2 stopped by filter');
    expect(screen.getByTestId('c-error')).toHaveTextContent('1 failed');
  });
});

describe('the flows list trigger cell', () => {
  it('shows a URL with Copy only for webhook-like triggers', () => {
    const { unmount } = render(<TriggerCell flow={flow({})} />);
    expect(screen.getByTestId('flow-webhook-url-3')).toHaveTextContent('/hooks/abc');
    expect(screen.getByTestId('flow-webhook-copy-3')).toBeInTheDocument();
    unmount();
    render(<TriggerCell flow={flow({ trigger_kind: 'schedule', schedule: 'Every 5 minutes from 2026-06-01 10:23 (UTC)' })} />);
    expect(screen.getByTestId('flow-schedule-3')).toHaveTextContent('Every 5 minutes');
    expect(screen.queryByTestId('flow-webhook-url-3')).not.toBeInTheDocument();
    expect(screen.queryByTestId('flow-webhook-copy-3')).not.toBeInTheDocument();
  });

  it('shows nothing to copy for a flow that is not live', () => {
    render(<TriggerCell flow={flow({ status: 'Draft', trigger_kind: null })} />);
    expect(screen.queryByTestId('flow-webhook-url-3')).not.toBeInTheDocument();
  });
});
