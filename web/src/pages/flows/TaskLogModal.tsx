/** Per-flow task logs: Success, Stopped by filter and Error tabs, a log list (each run's status in words), details and tasks of one log. */
import { Descriptions, Empty, List, Modal, Space, Spin, Tabs, Tag, Typography } from 'antd';
import dayjs from 'dayjs';
import { useEffect, useState } from 'react';
import { taskLogsApi } from '../../api/endpoints';
import type { Task, TaskLog, TaskLogType } from '../../api/types';
import { TaskStatusTag } from '../../lib/taskStatus';
import { ReplayButton, RunFacts } from './ReplayButton';

export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

export const formatDate = (value: string) => (dayjs(value).isValid() ? dayjs(value).format('DD MMM YYYY, HH:mm:ss') : value);

type Loaded<T> = { key: string; items: T[]; failed: boolean };

function TaskList({ logId }: { logId: number }) {
  const [loaded, setLoaded] = useState<Loaded<Task> | null>(null);
  const key = String(logId);

  useEffect(() => {
    let live = true;
    taskLogsApi
      .tasks(logId)
      .then((res) => live && setLoaded({ key, items: res.tasks ?? [], failed: false }))
      .catch(() => live && setLoaded({ key, items: [], failed: true }));
    return () => {
      live = false;
    };
  }, [logId, key]);

  if (!loaded || loaded.key !== key) return <Spin />;
  if (loaded.items.length === 0) return <Empty description="No Task Found" />;
  return (
    <List
      size="small"
      dataSource={loaded.items}
      renderItem={(task) => (
        <List.Item data-testid={`task-${task.id}`}>
          <div className="kz-task">
            <div>
              <Typography.Text strong>{task.app_name}</Typography.Text> <Tag>{task.step_id}</Tag>
              <Tag color={task.status.toUpperCase() === 'SUCCESS' ? 'green' : 'red'}>{task.status}</Tag>
              <Typography.Text type="secondary">{formatDate(task.task_date)}</Typography.Text>
            </div>
            <pre className="kz-json">{formatValue(task.data)}</pre>
          </div>
        </List.Item>
      )}
    />
  );
}

function LogDetails({ log }: { log: TaskLog }) {
  const entries = Object.entries(log.data ?? {});
  return (
    <div data-testid="tasklog-details" className="kz-tasklog-details">
      <Space style={{ justifyContent: 'space-between', width: '100%' }}>
        <Typography.Title level={5}>Task Details</Typography.Title>
        <ReplayButton log={log} />
      </Space>
      <RunFacts log={log} />
      {entries.length === 0 ? (
        <Empty description="No Label Found" />
      ) : (
        <Descriptions column={1} size="small" bordered>
          {entries.map(([k, v]) => (
            <Descriptions.Item key={k} label={k}>
              <pre className="kz-json">{formatValue(v)}</pre>
            </Descriptions.Item>
          ))}
        </Descriptions>
      )}
      <Typography.Title level={5}>Tasks</Typography.Title>
      <TaskList logId={log.id} />
    </div>
  );
}

function LogTab({ konnectId, type }: { konnectId: number; type: TaskLogType }) {
  const [loaded, setLoaded] = useState<Loaded<TaskLog> | null>(null);
  const [selected, setSelected] = useState<TaskLog | null>(null);
  const key = `${konnectId}:${type}`;

  useEffect(() => {
    let live = true;
    taskLogsApi
      .logs(konnectId, type)
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
      {konnectId !== null && (
        <Tabs
          destroyOnHidden
          items={[
            { key: 'SUCCESS', label: 'Success', children: <LogTab konnectId={konnectId} type="SUCCESS" /> },
            { key: 'FILTERED', label: 'Stopped by filter', children: <LogTab konnectId={konnectId} type="FILTERED" /> },
            { key: 'ERROR', label: 'Error', children: <LogTab konnectId={konnectId} type="ERROR" /> },
          ]}
        />
      )}
    </Modal>
  );
}
