/** A flow's runs that have not finished (GET /api/v1/konnects/{id}/runs/active): Queued, Running, or
 * Waiting until a time in a delay, each with a Cancel button (confirmed). Refetched every few seconds
 * while any is active; when one ends, the flow's task logs are refetched so it shows there. */
import { StopOutlined } from '@ant-design/icons';
import { Button, List, Popconfirm, Space, Tag, Typography } from 'antd';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { $api, errorMessage, queryClient } from '../../api/typed';
import type { ActiveRun } from '../../api/models';
import { useToast } from '../../lib/useToast';
import { formatDate } from './TaskSteps';

/** How often the list is fetched again while a run is active, and while none is. */
export const ACTIVE_REFETCH_MS = 3000;
export const IDLE_REFETCH_MS = 15000;

export const CANCEL_ASKED = 'The run is being cancelled: it stops before its next step.';

/** A run's state in words: "Queued", "Running (node-2)", "Waiting until 27 Nov 2026 03:00". */
export function activeLabel(run: ActiveRun): string {
  if (run.status === 'QUEUED') return 'Queued';
  if (run.status === 'WAITING' && run.waiting_for) {
    // a Wait for a Call (docs/waits.md): whom it waits for, since when, until when (its timeout)
    const since = run.waiting_since ? ` since ${formatDate(run.waiting_since)}` : '';
    const until = run.resume_at ? `, at most until ${formatDate(run.resume_at)}` : '';
    return `Waiting for ${run.waiting_for}${since}${until}`;
  }
  if (run.status === 'WAITING') return run.resume_at ? `Waiting until ${formatDate(run.resume_at)}` : 'Waiting';
  return run.step_id ? `Running (${run.step_id})` : 'Running';
}

const COLORS: Record<ActiveRun['status'], string> = { QUEUED: 'default', RUNNING: 'processing', WAITING: 'blue' };

function CancelButton({ konnectId, run }: { konnectId: number; run: ActiveRun }) {
  const toast = useToast();
  const cancel = $api.useMutation('post', '/api/v1/konnects/{konnect_id}/runs/{run_id}/cancel');
  const onConfirm = async () => {
    try {
      await cancel.mutateAsync({ params: { path: { konnect_id: konnectId, run_id: run.run_id } } });
      void toast.success(CANCEL_ASKED);
    } catch (err) {
      void toast.error(errorMessage(err, 'The run could not be cancelled'));
    }
    void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/konnects/{konnect_id}/runs/active'] });
    void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/task_logs/logs'] });
  };
  return (
    <Popconfirm
      title="Cancel this run?"
      description="It stops before its next step; the steps that ran stay done."
      okText="Cancel run"
      cancelText="Keep it"
      onConfirm={() => void onConfirm()}
    >
      <Button size="small" danger icon={<StopOutlined />} loading={cancel.isPending} data-testid={`cancel-run-${run.run_id}`}>
        Cancel
      </Button>
    </Popconfirm>
  );
}

export function ActiveRuns({ konnectId }: { konnectId: number }) {
  const active = $api.useQuery(
    'get',
    '/api/v1/konnects/{konnect_id}/runs/active',
    { params: { path: { konnect_id: konnectId } } },
    { refetchInterval: (query) => ((query.state.data?.runs.length ?? 0) > 0 ? ACTIVE_REFETCH_MS : IDLE_REFETCH_MS) },
  );
  const runs = active.data?.runs ?? [];
  // A run that left the list has finished: its task log is there now.
  const seen = useRef<string>('');
  const ids = runs.map((r) => r.run_id).join(',');
  useEffect(() => {
    if (seen.current && seen.current !== ids) {
      void queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/task_logs/logs'] });
    }
    seen.current = ids || ' ';
  }, [ids]);
  if (runs.length === 0) return null;
  return (
    <div className="kz-active-runs" data-testid="active-runs">
      <Typography.Title level={5} className="kz-drawer-title">
        Active runs
      </Typography.Title>
      <List
        size="small"
        dataSource={runs}
        renderItem={(run) => (
          <List.Item data-testid={`active-run-${run.run_id}`}>
            <Space wrap size={8}>
              <Tag color={COLORS[run.status]} data-testid={`active-run-status-${run.run_id}`} data-status={run.status}>
                {activeLabel(run)}
              </Tag>
              <Typography.Text type="secondary">{`since ${formatDate(run.since)}`}</Typography.Text>
              <Typography.Text code>{run.run_id.slice(0, 8)}</Typography.Text>
              {run.waiting_for?.startsWith('approval by') && (
                <Link to="/approvals" data-testid={`active-run-approvals-${run.run_id}`}>
                  Decide on the Approvals page
                </Link>
              )}
              <CancelButton konnectId={konnectId} run={run} />
            </Space>
          </List.Item>
        )}
      />
    </div>
  );
}
