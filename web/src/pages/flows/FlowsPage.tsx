import { EditOutlined, FileTextOutlined, PlusOutlined, SearchOutlined } from '@ant-design/icons';
import { Button, Empty, Input, Space, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import type { KonnectListItem } from '../../api/types';
import { FLOW_SEARCH_MIN, FLOWS_PAGE_SIZE } from '../../lib/constants';
import { CopyButton } from '../../lib/CopyButton';
import { flowLabel, statusLabel } from '../../lib/names';
import { TaskLogModal } from './TaskLogModal';
import { useKonnects } from './useKonnects';

const SEARCH_DEBOUNCE_MS = 300;

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const t = window.setTimeout(() => setDebounced(value), ms);
    return () => window.clearTimeout(t);
  }, [value, ms]);
  return debounced;
}

export function FlowsPage() {
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const [pageSize, setPageSize] = useState(FLOWS_PAGE_SIZE);
  const [logsFor, setLogsFor] = useState<KonnectListItem | null>(null);
  const q = useDebounced(search.trim(), SEARCH_DEBOUNCE_MS);
  const { konnects, total, loading } = useKonnects({
    page_size: pageSize,
    page_index: 1,
    ...(q.length >= FLOW_SEARCH_MIN ? { search_query: q } : {}),
  });
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

  const columns: TableColumnsType<KonnectListItem> = [
    {
      title: 'Name',
      key: 'name',
      render: (_, k) => <Typography.Text strong>{flowLabel(k)}</Typography.Text>,
    },
    {
      title: 'Publish Status',
      key: 'status',
      width: 150,
      render: (_, k) => (
        <Tag color={k.status === 'Published' ? 'green' : 'default'} data-testid={`flow-status-${k.id}`}>
          {statusLabel(k.status)}
        </Tag>
      ),
    },
    {
      title: 'Webhook URL',
      key: 'webhook',
      render: (_, k) =>
        k.status === 'Published' && k.webhook_url ? (
          <Space size="small" className="kz-webhook-cell">
            <Typography.Text code ellipsis={{ tooltip: k.webhook_url }} data-testid={`flow-webhook-url-${k.id}`}>
              {k.webhook_url}
            </Typography.Text>
            <CopyButton size="small" text={k.webhook_url} testId={`flow-webhook-copy-${k.id}`} />
          </Space>
        ) : (
          <Typography.Text type="secondary">-</Typography.Text>
        ),
    },
    {
      title: 'Actions',
      key: 'actions',
      width: 120,
      render: (_, k) => (
        <Space>
          <Tooltip title="Edit">
            <Button icon={<EditOutlined />} onClick={() => navigate(`/create/${k.id}`)} data-testid={`flow-edit-${k.id}`} />
          </Tooltip>
          <Tooltip title="Logs">
            <Button icon={<FileTextOutlined />} onClick={() => setLogsFor(k)} data-testid={`flow-logs-${k.id}`} />
          </Tooltip>
        </Space>
      ),
    },
  ];

  return (
    <div className="kz-page">
      <div className="kz-toolbar">
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
      </div>
      <Table<KonnectListItem>
        rowKey="id"
        columns={columns}
        dataSource={konnects}
        loading={loading && konnects.length === 0}
        pagination={false}
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
    </div>
  );
}
