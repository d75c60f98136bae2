import { DeleteOutlined, EditOutlined, FileTextOutlined, PlusOutlined, SearchOutlined } from '@ant-design/icons';
import { keepPreviousData } from '@tanstack/react-query';
import {
  Button,
  Empty,
  Input,
  Modal,
  Popconfirm,
  Result,
  Select,
  Space,
  Switch,
  Table,
  Tag,
  Tooltip,
  Typography,
  type ButtonProps,
  type TableColumnsType,
} from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { $api, ApiError, errorMessage, fetchClient } from '../../api/typed';
import type { KonnectListItem } from '../../api/models';
import { FLOW_SEARCH_MIN, FLOWS_PAGE_SIZE } from '../../lib/constants';
import { CopyButton } from '../../lib/CopyButton';
import { flowLabel, statusLabel } from '../../lib/names';
import { RunCountTags } from '../../lib/taskStatus';
import { useToast } from '../../lib/useToast';
import { FolderSidebar, invalidateFlows } from './FolderSidebar';
import { TaskLogModal } from './TaskLogModal';

const SEARCH_DEBOUNCE_MS = 300;
export const UNKNOWN_FOLDER = "This folder does'nt exist.";

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const t = window.setTimeout(() => setDebounced(value), ms);
    return () => window.clearTimeout(t);
  }, [value, ms]);
  return debounced;
}

/** What taking a flow offline does, said in its confirmation. */
export const OFFLINE_CONSEQUENCE = 'Its webhook will stop answering; runs stop. Its task logs stay.';

/** Only webhook-like triggers have a URL that starts runs: a schedule shows when it runs, a poll what it does. */
export function TriggerCell({ flow }: { flow: KonnectListItem }) {
  if (flow.status !== 'Published') return <Typography.Text type="secondary">-</Typography.Text>;
  if (flow.trigger_kind === 'schedule') {
    return (
      <Typography.Text data-testid={`flow-schedule-${flow.id}`}>{flow.schedule ?? 'On a schedule'}</Typography.Text>
    );
  }
  if (flow.trigger_kind === 'polling') {
    return (
      <Typography.Text type="secondary" data-testid={`flow-polling-${flow.id}`}>
        Checks {flow.left_app?.name ?? 'the app'} for new items
      </Typography.Text>
    );
  }
  if (flow.trigger_kind !== 'webhook' && flow.trigger_kind !== 'form') return <Typography.Text type="secondary">-</Typography.Text>;
  const url = flow.trigger_kind === 'form' ? flow.webhook_url.replace('/hooks/', '/forms/') : flow.webhook_url;
  return (
    <Space size="small" className="kz-webhook-cell">
      <Typography.Text code ellipsis={{ tooltip: url }} data-testid={`flow-webhook-url-${flow.id}`}>
        {url}
      </Typography.Text>
      <CopyButton size="small" text={url} testId={`flow-webhook-copy-${flow.id}`} />
    </Space>
  );
}

/** The spec's toast for a bulk move. */
export function moveMessage(count: number): string {
  return count === 1 ? 'Flow moved successfully' : 'Flows moved successfully';
}

export function FlowsPage() {
  const { index = 'home' } = useParams();
  const validIndex = index === 'home' || /^\d{1,18}$/.test(index);
  return (
    <div className="kz-page kz-flows">
      <FolderSidebar index={index} />
      <section className="kz-flows-main">
        {validIndex ? (
          <FlowList key={index} index={index} />
        ) : (
          <Result status="404" title={UNKNOWN_FOLDER} data-testid="unknown-folder" />
        )}
      </section>
    </div>
  );
}

function FlowList({ index }: { index: string }) {
  const navigate = useNavigate();
  const toast = useToast();
  const [modal, modalHolder] = Modal.useModal();
  const [search, setSearch] = useState('');
  const [pageSize, setPageSize] = useState(FLOWS_PAGE_SIZE);
  const [logsFor, setLogsFor] = useState<KonnectListItem | null>(null);
  const [selected, setSelected] = useState<number[]>([]);
  const [target, setTarget] = useState<number | null>(null);
  const q = useDebounced(search.trim(), SEARCH_DEBOUNCE_MS);
  const folders = $api.useQuery('get', '/api/v1/folders/list');
  const list = $api.useQuery(
    'get',
    '/api/v1/konnects',
    {
      params: {
        query: {
          page_size: pageSize,
          page_index: 1,
          folder: index,
          ...(q.length >= FLOW_SEARCH_MIN ? { search_query: q } : {}),
        },
      },
    },
    { placeholderData: keepPreviousData },
  );
  const konnects = list.data?.konnects ?? [];
  const total = list.data?.total_konnects ?? 0;
  const loading = list.isFetching;
  const hasMore = konnects.length < total;
  const sentinel = useRef<HTMLDivElement>(null);

  // Infinite scroll: grow the page by 20 when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !hasMore || loading || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setPageSize((n) => n + FLOWS_PAGE_SIZE);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasMore, loading]);

  if (list.error instanceof ApiError && list.error.status === 404) {
    return <Result status="404" title={UNKNOWN_FOLDER} data-testid="unknown-folder" />;
  }

  const setStatus = async (k: KonnectListItem, status: 'Published' | 'Draft' | 'DELETED') => {
    try {
      const { data } = await fetchClient.POST('/api/v1/konnects/{konnect_id}/update_status', {
        params: { path: { konnect_id: k.id } },
        body: { status },
      });
      if (status === 'DELETED') {
        if (data?.message === 'SUCCESS') void toast.success('Deleted');
        else void toast.error('Cannot Delete this Flow');
      } else {
        void toast.success(data?.details ?? 'Status changed');
      }
    } catch (err) {
      void toast.error(status === 'DELETED' ? 'Cannot Delete this Flow' : errorMessage(err, 'Something went wrong.'));
    }
    setSelected((ids) => ids.filter((id) => id !== k.id));
    invalidateFlows();
  };

  /** Taking a live flow offline is always explicit and confirmed, with what it does. */
  const confirmOffline = (k: KonnectListItem) => {
    void modal.confirm({
      title: `Take "${flowLabel(k)}" offline?`,
      content: OFFLINE_CONSEQUENCE,
      okText: 'Take offline',
      okButtonProps: { danger: true, 'data-testid': `flow-offline-ok-${k.id}` } as ButtonProps,
      cancelText: 'Keep it live',
      onOk: () => setStatus(k, 'Draft'),
    });
  };

  const move = async () => {
    if (selected.length === 0) {
      void toast.warning('No flows selected');
      return;
    }
    if (target === null) {
      void toast.warning('Choose a folder to move the flows to');
      return;
    }
    try {
      await fetchClient.POST('/api/v1/folders/{folder_id}/assign', {
        params: { path: { folder_id: target } },
        body: { konnects: selected.join(',') },
      });
      void toast.success(moveMessage(selected.length));
      setSelected([]);
    } catch (err) {
      void toast.error(`Failed to move flow(s): ${errorMessage(err, 'An unknown error occurred')}`);
    }
    invalidateFlows();
  };

  const columns: TableColumnsType<KonnectListItem> = [
    {
      title: 'Name',
      key: 'name',
      render: (_, k) => <Typography.Text strong>{flowLabel(k)}</Typography.Text>,
    },
    {
      title: 'Publish Status',
      key: 'status',
      width: 170,
      render: (_, k) => (
        <Space wrap size={4}>
          <Switch
            size="small"
            checked={k.status === 'Published'}
            onChange={(on) => (on ? void setStatus(k, 'Published') : confirmOffline(k))}
            data-testid={`flow-switch-${k.id}`}
          />
          <span data-testid={`flow-status-${k.id}`}>{statusLabel(k.status)}</span>
          {k.status === 'Published' && k.draft_pending ? (
            <Tooltip title="Saved changes wait beside the live version; the live version keeps running until you publish them.">
              <Tag color="blue" data-testid={`flow-pending-${k.id}`}>
                Unpublished changes
              </Tag>
            </Tooltip>
          ) : null}
        </Space>
      ),
    },
    {
      title: 'Trigger',
      key: 'webhook',
      ellipsis: true,
      render: (_, k) => <TriggerCell flow={k} />,
    },
    {
      title: 'Runs',
      key: 'runs',
      width: 120,
      render: (_, k) => <RunCountTags counts={k} testId={`flow-counts-${k.id}`} />,
    },
    {
      title: 'Actions',
      key: 'actions',
      width: 150,
      fixed: 'right', // Edit, Logs and Delete stay on screen when the table is wider than the page
      render: (_, k) => (
        <Space>
          <Tooltip title="Edit">
            <Button icon={<EditOutlined />} onClick={() => navigate(`/create/${k.id}`)} data-testid={`flow-edit-${k.id}`} />
          </Tooltip>
          <Tooltip title="Logs">
            <Button icon={<FileTextOutlined />} onClick={() => setLogsFor(k)} data-testid={`flow-logs-${k.id}`} />
          </Tooltip>
          <Popconfirm
            title="Delete this flow?"
            onConfirm={() => void setStatus(k, 'DELETED')}
            okButtonProps={{ 'data-testid': `flow-delete-ok-${k.id}` } as ButtonProps}
          >
            <Button danger icon={<DeleteOutlined />} data-testid={`flow-delete-${k.id}`} />
          </Popconfirm>
        </Space>
      ),
    },
  ];

  const moveTargets = (folders.data?.folders ?? []).filter((f) => String(f.id) !== index);

  return (
    <>
      {modalHolder}
      <div className="kz-toolbar kz-flows-toolbar">
        <Input
          allowClear
          prefix={<SearchOutlined />}
          placeholder="Search in Flows"
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            setPageSize(FLOWS_PAGE_SIZE);
          }}
          className="kz-search"
          data-testid="flows-search"
        />
        <Space.Compact>
          <Select<number>
            placeholder="Move to folder"
            value={target ?? undefined}
            onChange={setTarget}
            options={moveTargets.map((f) => ({ value: f.id, label: f.name }))}
            className="kz-move-select"
            data-testid="move-target"
          />
          <Button onClick={() => void move()} data-testid="move-flows">
            Move{selected.length > 0 ? ` (${selected.length})` : ''}
          </Button>
        </Space.Compact>
      </div>
      <Table<KonnectListItem>
        rowKey="id"
        columns={columns}
        dataSource={konnects}
        loading={list.isPending}
        pagination={false}
        scroll={{ x: 560 }}
        rowSelection={{
          selectedRowKeys: selected,
          onChange: (keys) => setSelected(keys.map(Number)),
          getCheckboxProps: (k) => ({ 'data-testid': `flow-check-${k.id}` }) as object,
        }}
        onRow={(k) => ({ 'data-testid': `flow-row-${k.id}` }) as React.HTMLAttributes<HTMLElement>}
        locale={{
          emptyText: (
            <Empty description="No Flow Found">
              <Button type="primary" icon={<PlusOutlined />} onClick={() => navigate('/create')}>
                Create Flow
              </Button>
            </Empty>
          ),
        }}
      />
      <div ref={sentinel} className="kz-list-end">
        {hasMore ? (
          <Button onClick={() => setPageSize((n) => n + FLOWS_PAGE_SIZE)} loading={loading}>
            Load more
          </Button>
        ) : (
          konnects.length > 0 && <Typography.Text strong>Bottom of the Page</Typography.Text>
        )}
      </div>
      <TaskLogModal
        konnectId={logsFor?.id ?? null}
        title={logsFor ? `Task Logs - ${flowLabel(logsFor)}` : ''}
        onClose={() => setLogsFor(null)}
      />
    </>
  );
}
