/** Per-flow task logs: Success, Stopped by filter and Error tabs, a log list (each run's status in words), and one run's details: its trigger data and its steps (TaskSteps). */
import { Empty, List, Modal, Space, Spin, Tabs, Tag, Typography } from 'antd';
import { useEffect, useState } from 'react';
import { call, fetchClient } from '../../api/typed';
import type { TaskLog, TaskLogType } from '../../api/models';
import { TaskStatusTag } from '../../lib/taskStatus';
import { ActiveRuns } from './ActiveRuns';
import { ReplayButton, RunFacts } from './ReplayButton';
import { formatDate, RunData, StepList } from './TaskSteps';

/** Logs per tab: the most recent runs of one status. */
export const TASK_LOG_PAGE_SIZE = 60;

type Loaded<T> = { key: string; items: T[]; failed: boolean };

function LogDetails({ log }: { log: TaskLog }) {
  return (
    <div data-testid="tasklog-details" className="kz-tasklog-details">
      <Space style={{ justifyContent: 'space-between', width: '100%' }}>
        <Typography.Title level={5}>Task Details</Typography.Title>
        <ReplayButton log={log} />
      </Space>
      <RunFacts log={log} />
      <RunData log={log} />
      <Typography.Title level={5}>Steps</Typography.Title>
      <StepList logId={log.id} />
    </div>
  );
}

function LogTab({ konnectId, type }: { konnectId: number; type: TaskLogType }) {
  const [loaded, setLoaded] = useState<Loaded<TaskLog> | null>(null);
  const [selected, setSelected] = useState<TaskLog | null>(null);
  const key = `${konnectId}:${type}`;

  useEffect(() => {
    let live = true;
    const query = { konnect_id: konnectId, task_log_type: type, page_index: 1, page_size: TASK_LOG_PAGE_SIZE };
    call(fetchClient.GET('/api/v1/task_logs/logs', { params: { query } }))
      .then((res) => live && setLoaded({ key, items: res.task_logs ?? [], failed: false }))
      .catch(() => live && setLoaded({ key, items: [], failed: true }));
    return () => {
      live = false;
    };
  }, [konnectId, type, key]);

  if (!loaded || loaded.key !== key) return <Spin />;
  if (loaded.items.length === 0) return <Empty description="No Task Logs Found" />;

  return (
    <div className="kz-tasklog">
      <List
        className="kz-tasklog-list"
        size="small"
        dataSource={loaded.items}
        renderItem={(log) => (
          <List.Item
            data-testid={`tasklog-item-${log.id}`}
            className={selected?.id === log.id ? 'kz-selected' : undefined}
            onClick={() => setSelected(log)}
          >
            <span>#{log.id}</span>
            <TaskStatusTag status={log.status} testId={`tasklog-status-${log.id}`} />
            {log.revision != null ? (
              <Tag title={`Ran revision ${log.revision} of the flow`} data-testid={`tasklog-revision-${log.id}`}>{`rev ${log.revision}`}</Tag>
            ) : null}
            <Typography.Text type="secondary">{formatDate(log.task_date)}</Typography.Text>
          </List.Item>
        )}
      />
      <div className="kz-tasklog-pane">
        {selected ? <LogDetails key={selected.id} log={selected} /> : <Empty description="Select a task log to see its details" />}
      </div>
    </div>
  );
}

export function TaskLogModal({ konnectId, title, onClose }: { konnectId: number | null; title: string; onClose: () => void }) {
  return (
    <Modal open={konnectId !== null} title={title} onCancel={onClose} footer={null} width={900} destroyOnHidden>
      {konnectId !== null && <ActiveRuns konnectId={konnectId} />}
      {konnectId !== null && (
        <Tabs
          destroyOnHidden
          items={[
            { key: 'SUCCESS', label: 'Success', children: <LogTab konnectId={konnectId} type="SUCCESS" /> },
            { key: 'FILTERED', label: 'Stopped by filter', children: <LogTab konnectId={konnectId} type="FILTERED" /> },
            { key: 'ERROR', label: 'Error', children: <LogTab konnectId={konnectId} type="ERROR" /> },
            { key: 'CANCELLED', label: 'Cancelled', children: <LogTab konnectId={konnectId} type="CANCELLED" /> },
          ]}
        />
      )}
    </Modal>
  );
}
