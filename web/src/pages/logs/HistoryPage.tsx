/** /logs — FLOW HISTORY: the user's flows with their Success/Error run counts, filters and a detail drawer. */
import { DownOutlined, EyeOutlined, UpOutlined } from '@ant-design/icons';
import { keepPreviousData } from '@tanstack/react-query';
import {
  Button,
  DatePicker,
  Descriptions,
  Empty,
  Input,
  List,
  Select,
  Space,
  Table,
  Tag,
  Tooltip,
  Typography,
  type TableColumnsType,
} from 'antd';
import { Link } from 'react-router';
import { Drawer } from '../../lib/Drawer';
import type { Dayjs } from 'dayjs';
import { useEffect, useRef, useState } from 'react';
import { $api } from '../../api/typed';
import type { KonnectListItem, TaskLog, TaskLogType } from '../../api/models';
import { FLOW_SEARCH_MIN, HISTORY_PAGE_SIZE } from '../../lib/constants';
import { flowLabel, statusLabel } from '../../lib/names';
import { RunCountTags, STATUS_FILTER_OPTIONS, TaskStatusTag } from '../../lib/taskStatus';
import { ActiveRuns } from '../flows/ActiveRuns';
import { ReplayButton } from '../flows/ReplayButton';
import { formatDate, StepList } from '../flows/TaskSteps';

export interface HistoryFilters {
  search: string;
  start: Dayjs | null;
  end: Dayjs | null;
  status: TaskLogType | null;
}

const EMPTY: HistoryFilters = { search: '', start: null, end: null, status: null };

/** The query of the history call for `filters` and the number of pages of 30 loaded. */
export function historyQuery(filters: HistoryFilters, pages: number) {
  const query: {
    page_size: number;
    page_index: number;
    search_query?: string;
    start_date?: string;
    end_date?: string;
    status?: TaskLogType;
  } = { page_size: HISTORY_PAGE_SIZE * pages, page_index: 1 };
  const search = filters.search.trim();
  if (search.length >= FLOW_SEARCH_MIN) query.search_query = search;
  if (filters.start) query.start_date = filters.start.format('YYYY-MM-DD');
  if (filters.end) query.end_date = filters.end.format('YYYY-MM-DD');
  if (filters.status) query.status = filters.status;
  return query;
}

/** Call a flow (docs/sub-flows.md): the run that called this one, and the runs this one called, each
 * linking to its flow (its run id shown short, in full as the title). */
export function CallLinks({ log }: { log: TaskLog }) {
  const caller = log.called_by;
  return (
    <>
      {caller ? (
        <Tag color="purple" title={`Called by run ${caller.run_id} (step ${caller.step_id})`} data-testid={`called-by-${log.id}`}>
          Called by <Link to={`/create/${caller.konnect_id}`}>{caller.konnect_name || `flow ${caller.konnect_id}`}</Link>
          {` · run ${caller.run_id.slice(0, 8)}`}
        </Tag>
      ) : null}
      {(log.calls ?? []).map((call) => (
        <Tag key={`${call.step_id}-${call.run_id}`} color="cyan" title={`Step ${call.step_id} called run ${call.run_id}`} data-testid={`calls-${log.id}-${call.run_id}`}>
          Called{' '}
          {call.flow_id != null ? <Link to={`/create/${call.flow_id}`}>{call.flow_name || `flow ${call.flow_id}`}</Link> : call.flow_name}
          {` · run ${call.run_id.slice(0, 8)}`}
        </Tag>
      ))}
    </>
  );
}

/** One run in the drawer: its status, date, attempts and replays; "Steps" unfolds its steps (app, status, duration, input and output). */
function HistoryRun({ log }: { log: TaskLog }) {
  const [open, setOpen] = useState(false);
  return (
    <List.Item data-testid={`history-log-${log.id}`}>
      <div className="kz-history-run">
        <Space wrap size={8}>
          <TaskStatusTag status={log.status} testId={`history-run-status-${log.id}`} />
          <Typography.Text type="secondary">{formatDate(log.task_date)}</Typography.Text>
          {log.revision != null ? (
            <Tag title={`Ran revision ${log.revision} of the flow`} data-testid={`history-revision-${log.id}`}>{`rev ${log.revision}`}</Tag>
          ) : null}
          {(log.attempts ?? 1) > 1 ? <Tag>{`${log.attempts} attempts`}</Tag> : null}
          <CallLinks log={log} />
          {log.replay_of ? (
            <Tag color="blue" title={`Replay of run ${log.replay_of}`} data-testid={`replay-of-${log.id}`}>
              {`Replay of ${log.replay_of.slice(0, 8)}`}
            </Tag>
          ) : null}
          {log.cancelled_by ? (
            <Typography.Text type="secondary" data-testid={`cancelled-by-${log.id}`}>
              {`Cancelled by ${log.cancelled_by}`}
            </Typography.Text>
          ) : null}
          {log.replayed_as ? (
            <Tag title={`Replayed as run ${log.replayed_as}`} data-testid={`replayed-as-${log.id}`}>
              {`Replayed as ${log.replayed_as.slice(0, 8)}`}
            </Tag>
          ) : null}
          <Button
            size="small"
            icon={open ? <UpOutlined /> : <DownOutlined />}
            onClick={() => setOpen(!open)}
            aria-expanded={open}
            data-testid={`history-steps-toggle-${log.id}`}
          >
            Steps
          </Button>
          <ReplayButton log={log} />
        </Space>
        {open && (
          <div className="kz-history-steps" data-testid={`history-steps-${log.id}`}>
            <StepList logId={log.id} />
          </div>
        )}
      </div>
    </List.Item>
  );
}

function FlowDrawer({ flow, onClose }: { flow: KonnectListItem | null; onClose: () => void }) {
  const logs = $api.useQuery(
    'get',
    '/api/v1/task_logs/logs',
    { params: { query: { konnect_id: flow?.id ?? 0, page_index: 1, page_size: 60 } } },
    { enabled: flow !== null },
  );
  return (
    <Drawer open={flow !== null} onClose={onClose} title={flow ? flowLabel(flow) : ''} size="large" destroyOnHidden>
      {flow && (
        <div data-testid="history-drawer">
          <Descriptions column={1} size="small" bordered>
            <Descriptions.Item label="Name">{flowLabel(flow)}</Descriptions.Item>
            <Descriptions.Item label="Creation Date">{formatDate(flow.created_at)}</Descriptions.Item>
            <Descriptions.Item label="Status">{statusLabel(flow.status)}</Descriptions.Item>
            <Descriptions.Item label="Apps">
              {[flow.left_app?.name, ...flow.right_apps.map((a) => a.app_name)].filter(Boolean).join(' → ')}
            </Descriptions.Item>
            <Descriptions.Item label="Success">{flow.success_task_count}</Descriptions.Item>
            <Descriptions.Item label="Stopped by filter">{flow.filtered_task_count ?? 0}</Descriptions.Item>
            <Descriptions.Item label="Error">{flow.error_task_count}</Descriptions.Item>
          </Descriptions>
          <ActiveRuns konnectId={flow.id} />
          <Typography.Title level={5} className="kz-drawer-title">
            Latest runs
          </Typography.Title>
          <List
            size="small"
            loading={logs.isPending}
            dataSource={logs.data?.task_logs ?? []}
            locale={{ emptyText: 'No Task Logs Found' }}
            renderItem={(log) => <HistoryRun log={log} />}
          />
        </div>
      )}
    </Drawer>
  );
}

export function HistoryPage() {
  const [draft, setDraft] = useState<HistoryFilters>(EMPTY);
  const [applied, setApplied] = useState<HistoryFilters>(EMPTY);
  const [pages, setPages] = useState(1);
  const [open, setOpen] = useState<KonnectListItem | null>(null);
  const query = historyQuery(applied, pages);
  const searching = query.search_query !== undefined;
  const history = $api.useQuery(
    'get',
    '/api/v1/task_logs/konnects',
    { params: { query } },
    { enabled: !searching, placeholderData: keepPreviousData },
  );
  const searched = $api.useQuery(
    'get',
    '/api/v1/task_logs/search_konnects',
    { params: { query } },
    { enabled: searching, placeholderData: keepPreviousData },
  );
  const current = searching ? searched : history;
  // The spec: a load failure empties the list and stops further pages.
  const failed = current.isError;
  const flows = failed ? [] : (current.data?.konnects ?? []);
  const total = failed ? 0 : (current.data?.total_konnects ?? 0);
  const hasMore = !failed && flows.length < total;
  const loading = current.isFetching;
  const sentinel = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !hasMore || loading || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setPages((n) => n + 1);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasMore, loading]);

  const go = () => {
    setPages(1);
    setApplied(draft);
  };
  const clear = () => {
    setPages(1);
    setDraft(EMPTY);
    setApplied(EMPTY);
  };

  const columns: TableColumnsType<KonnectListItem> = [
    { title: 'Name', key: 'name', render: (_, k) => <Typography.Text strong>{flowLabel(k)}</Typography.Text> },
    { title: 'Creation Date', key: 'created', render: (_, k) => formatDate(k.created_at) },
    {
      title: 'Status',
      key: 'status',
      render: (_, k) => (
        <Tooltip
          title={`Success: ${k.success_task_count} · Stopped by filter: ${k.filtered_task_count ?? 0} · Error: ${k.error_task_count}`}
        >
          <Space size={4} data-testid={`history-status-${k.id}`}>
            <RunCountTags counts={k} testId={`history-counts-${k.id}`} />
            <Typography.Text type="secondary">{statusLabel(k.status)}</Typography.Text>
          </Space>
        </Tooltip>
      ),
    },
    {
      title: 'Action',
      key: 'action',
      width: 90,
      render: (_, k) => (
        <Tooltip title="Details">
          <Button icon={<EyeOutlined />} onClick={() => setOpen(k)} data-testid={`history-open-${k.id}`} />
        </Tooltip>
      ),
    },
  ];

  return (
    <div className="kz-page kz-history">
      <div className="kz-toolbar kz-history-filters">
        <Input
          allowClear
          placeholder="Search in Name"
          value={draft.search}
          onChange={(e) => setDraft({ ...draft, search: e.target.value })}
          onPressEnter={go}
          data-testid="history-search"
        />
        <DatePicker
          placeholder="Start Date"
          value={draft.start}
          onChange={(d) => setDraft({ ...draft, start: d })}
          data-testid="history-start"
        />
        <DatePicker
          placeholder="End Date"
          value={draft.end}
          onChange={(d) => setDraft({ ...draft, end: d })}
          data-testid="history-end"
        />
        <Select<TaskLogType>
          allowClear
          placeholder="Status"
          value={draft.status ?? undefined}
          onChange={(v) => setDraft({ ...draft, status: v ?? null })}
          options={STATUS_FILTER_OPTIONS}
          className="kz-history-status"
          data-testid="history-status"
        />
        <Button type="primary" onClick={go} data-testid="history-go">
          Go
        </Button>
        <Button onClick={clear} data-testid="history-clear">
          Clear
        </Button>
      </div>
      <Table<KonnectListItem>
        rowKey="id"
        columns={columns}
        dataSource={flows}
        loading={current.isPending && !failed && current.fetchStatus !== 'idle'}
        pagination={false}
        scroll={{ x: 560 }}
        onRow={(k) => ({ 'data-testid': `history-row-${k.id}` }) as React.HTMLAttributes<HTMLElement>}
        locale={{ emptyText: <Empty description="No Flow Found" /> }}
      />
      <div ref={sentinel} className="kz-list-end">
        {hasMore ? (
          <Button onClick={() => setPages((n) => n + 1)} loading={loading} data-testid="history-more">
            Load more
          </Button>
        ) : (
          flows.length > 0 && <Typography.Text strong>End of List - No More Flows to Load</Typography.Text>
        )}
      </div>
      <FlowDrawer flow={open} onClose={() => setOpen(null)} />
    </div>
  );
}
