import { EditOutlined, FileTextOutlined, CrownOutlined } from '@ant-design/icons';
import { Button, Card, Col, Row, Statistic, Table, Tag, Tooltip, Typography, type TableColumnsType } from 'antd';
import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { $api } from '../api/typed';
import type { KonnectListItem } from '../api/models';
import { DASHBOARD_PAGE_SIZE, DASHBOARD_RECENT, PREMIUM_PRICE } from '../lib/constants';
import { flowLabel, statusLabel } from '../lib/names';
import { RunCountTags } from '../lib/taskStatus';
import { clearSession } from '../lib/session';
import { PlanButton } from './account/PlanChange';
import { TaskLogModal } from './flows/TaskLogModal';
import { formatDate } from './flows/TaskSteps';

/** A two-slice pie (consumed vs available) drawn with SVG. */
export function TasksPie({ consumed, available }: { consumed: number; available: number }) {
  const total = consumed + available;
  const share = total > 0 ? consumed / total : 0;
  const r = 15.9155; // circumference 100
  return (
    <svg viewBox="0 0 42 42" className="kz-pie" role="img" aria-label={`Tasks consumed ${consumed}, available ${available}`}>
      <circle cx="21" cy="21" r={r} fill="transparent" stroke="var(--kz-pie-available, #52c41a)" strokeWidth="8" />
      {share > 0 && (
        <circle
          cx="21"
          cy="21"
          r={r}
          fill="transparent"
          stroke="var(--kz-pie-consumed, #1677ff)"
          strokeWidth="8"
          strokeDasharray={`${share * 100} ${100 - share * 100}`}
          strokeDashoffset="25"
        />
      )}
    </svg>
  );
}

export function Dashboard() {
  const navigate = useNavigate();
  const [logsFor, setLogsFor] = useState<KonnectListItem | null>(null);
  const stats = $api.useQuery('get', '/api/v1/dashboard/stats');
  const list = $api.useQuery('get', '/api/v1/konnects', {
    params: { query: { page_size: DASHBOARD_PAGE_SIZE, page_index: 1 } },
  });
  const recent = (list.data?.konnects ?? []).slice(0, DASHBOARD_RECENT);

  // The spec: a stats load failure ends the session and goes to /login.
  useEffect(() => {
    if (stats.isError) {
      clearSession();
      navigate('/login', { replace: true });
    }
  }, [stats.isError, navigate]);

  const s = stats.data;
  const columns: TableColumnsType<KonnectListItem> = [
    { title: 'Name', key: 'name', render: (_, k) => flowLabel(k) },
    { title: 'Created At', key: 'created_at', render: (_, k) => formatDate(k.created_at) },
    {
      title: 'Status',
      key: 'status',
      render: (_, k) => <Tag color={k.status === 'Published' ? 'green' : 'default'}>{statusLabel(k.status)}</Tag>,
    },
    {
      title: 'Runs',
      key: 'runs',
      render: (_, k) => <RunCountTags counts={k} testId={`recent-counts-${k.id}`} />,
    },
    {
      title: 'Logs',
      key: 'logs',
      render: (_, k) => (
        <Tooltip title="Logs">
          <Button size="small" icon={<FileTextOutlined />} onClick={() => setLogsFor(k)} data-testid={`recent-logs-${k.id}`} />
        </Tooltip>
      ),
    },
    {
      title: 'Action',
      key: 'action',
      render: (_, k) => (
        <Tooltip title="Edit">
          <Button size="small" icon={<EditOutlined />} onClick={() => navigate(`/create/${k.id}`)} />
        </Tooltip>
      ),
    },
  ];

  return (
    <div className="kz-page kz-dashboard">
      <Row gutter={[16, 16]}>
        <Col xs={24} md={12} xl={6}>
          <Card title="Total Flows" loading={stats.isPending} data-testid="card-total-flows">
            <Statistic value={s?.total_konnects ?? 0} data-testid="stat-total" />
            <div className="kz-stat-row">
              <Statistic title="Active" value={s?.active_konnects ?? 0} data-testid="stat-active" />
              <Statistic title="Inactive" value={s?.inactive_konnects ?? 0} data-testid="stat-inactive" />
            </div>
          </Card>
        </Col>
        <Col xs={24} md={12} xl={6}>
          <Card title="Extra Tasks" data-testid="card-extra-tasks">
            <Statistic value={0} />
            <div className="kz-stat-row">
              <Statistic title="Consumed" value={0} />
              <Statistic title="Available" value={0} />
            </div>
          </Card>
        </Col>
        <Col xs={24} md={12} xl={6}>
          <Card title="Upgrade to Premium" data-testid="card-premium">
            <Typography.Title level={3} className="kz-price">
              <CrownOutlined /> {PREMIUM_PRICE}
            </Typography.Title>
            <Typography.Paragraph type="secondary">More tasks, premium apps and priority support.</Typography.Paragraph>
            <PlanButton plan="Premium" label="Upgrade" testId="premium-upgrade" />
          </Card>
        </Col>
        <Col xs={24} md={12} xl={6}>
          <Card title="Tasks Overview" loading={stats.isPending} data-testid="card-tasks-overview">
            <div className="kz-pie-wrap">
              <TasksPie consumed={s?.task_consumed ?? 0} available={s?.task_available ?? 0} />
              <div className="kz-pie-legend">
                <div data-testid="tasks-consumed">
                  <span className="kz-dot kz-dot-consumed" /> Consumed: {s?.task_consumed ?? 0}
                </div>
                <div data-testid="tasks-available">
                  <span className="kz-dot kz-dot-available" /> Available: {s?.task_available ?? 0}
                </div>
                <div data-testid="tasks-limit">Limit: {s?.task_limit ?? 0}</div>
              </div>
            </div>
          </Card>
        </Col>
        <Col span={24}>
          <Card title="Recent Flows">
            <Table<KonnectListItem>
              rowKey="id"
              size="small"
              columns={columns}
              dataSource={recent}
              loading={list.isPending}
              pagination={false}
              scroll={{ x: 640 }}
              locale={{ emptyText: 'No recent flow found. Create a flow.' }}
              data-testid="recent-flows"
            />
          </Card>
        </Col>
      </Row>
      <TaskLogModal
        konnectId={logsFor?.id ?? null}
        title={logsFor ? `Task Logs - ${flowLabel(logsFor)}` : ''}
        onClose={() => setLogsFor(null)}
      />
    </div>
  );
}
