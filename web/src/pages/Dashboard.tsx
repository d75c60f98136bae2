import { EditOutlined, FileTextOutlined } from '@ant-design/icons';
import { Button, Card, Col, Row, Statistic, Table, Tag, Tooltip, type TableColumnsType } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { KonnectListItem } from '../api/types';
import { DASHBOARD_PAGE_SIZE, DASHBOARD_RECENT } from '../lib/constants';
import { flowLabel, statusLabel } from '../lib/names';
import { formatDate, TaskLogModal } from './flows/TaskLogModal';
import { useKonnects } from './flows/useKonnects';

export function Dashboard() {
  const navigate = useNavigate();
  const [logsFor, setLogsFor] = useState<KonnectListItem | null>(null);
  const { konnects, total, loading } = useKonnects({ page_size: DASHBOARD_PAGE_SIZE, page_index: 1 });
  const recent = konnects.slice(0, DASHBOARD_RECENT);
  const active = konnects.filter((k) => k.status === 'Published').length;

  const columns: TableColumnsType<KonnectListItem> = [
    { title: 'Name', key: 'name', render: (_, k) => flowLabel(k) },
    { title: 'Created At', key: 'created_at', render: (_, k) => formatDate(k.created_at) },
    {
      title: 'Status',
      key: 'status',
      render: (_, k) => <Tag color={k.status === 'Published' ? 'green' : 'default'}>{statusLabel(k.status)}</Tag>,
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
    <div className="kz-page">
      <Row gutter={[16, 16]}>
        <Col xs={24} md={8}>
          <Card>
            <Statistic title="Total Flows" value={total} loading={loading} />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card>
            <Statistic title="Published (recent)" value={active} loading={loading} />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card>
            <Statistic title="Extra Tasks" value={0} />
          </Card>
        </Col>
        <Col span={24}>
          <Card title="Recent Flows">
            <Table<KonnectListItem>
              rowKey="id"
              size="small"
              columns={columns}
              dataSource={recent}
              loading={loading}
              pagination={false}
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
