/** /approvals — PENDING APPROVALS: the Approval steps waiting for the signed-in person's decision
 * (GET /api/v1/approvals), each with Approve and Reject (POST /api/v1/approvals/{id}/decide, the same
 * decided-once decision as the mailed links; docs/waits.md, "Approval"). */
import { CheckOutlined, CloseOutlined } from '@ant-design/icons';
import { Alert, Button, Empty, Popconfirm, Space, Table, Typography, type TableColumnsType } from 'antd';
import { useState } from 'react';
import { $api, errorMessage, queryClient } from '../../api/typed';
import type { PendingApproval } from '../../api/models';
import { useToast } from '../../lib/useToast';
import { formatDate } from '../flows/TaskSteps';

type Decision = 'approved' | 'rejected';

export function ApprovalsPage() {
  const toast = useToast();
  // Fresh whenever the page opens (someone may have decided, or a run asked, a moment ago), then every 15 s.
  const list = $api.useQuery('get', '/api/v1/approvals', {}, { refetchOnMount: 'always', refetchInterval: 15_000 });
  const decide = $api.useMutation('post', '/api/v1/approvals/{approval_id}/decide');
  const [busy, setBusy] = useState<number | null>(null);
  const approvals = list.data?.approvals ?? [];

  const onDecide = async (approval: PendingApproval, decision: Decision) => {
    setBusy(approval.id);
    try {
      const reply = await decide.mutateAsync({ params: { path: { approval_id: approval.id } }, body: { decision } });
      void toast.success(reply.message);
    } catch (err) {
      void toast.error(errorMessage(err, 'The decision could not be recorded'));
    } finally {
      setBusy(null);
      await queryClient.invalidateQueries({ queryKey: ['get', '/api/v1/approvals'] });
    }
  };

  const columns: TableColumnsType<PendingApproval> = [
    {
      title: 'Flow',
      key: 'flow',
      render: (_, a) => <span data-testid={`approval-flow-${a.id}`}>{a.konnect_name}</span>,
    },
    {
      title: 'Message',
      key: 'message',
      render: (_, a) => (
        <Typography.Paragraph style={{ whiteSpace: 'pre-wrap', margin: 0 }} data-testid={`approval-message-${a.id}`}>
          {a.message || <Typography.Text type="secondary">(no message)</Typography.Text>}
        </Typography.Paragraph>
      ),
    },
    { title: 'Approvers', key: 'approvers', render: (_, a) => a.approvers.join(', ') },
    { title: 'Asked', key: 'created_at', render: (_, a) => formatDate(a.created_at) },
    { title: 'Until', key: 'until', render: (_, a) => formatDate(a.until) },
    {
      title: 'Decision',
      key: 'decide',
      render: (_, a) => (
        <Space>
          <Popconfirm
            title="Approve this request?"
            description="The run goes on with your approval."
            okText="Approve"
            onConfirm={() => onDecide(a, 'approved')}
            okButtonProps={{ 'data-testid': `approval-approve-confirm-${a.id}` }}
          >
            <Button type="primary" icon={<CheckOutlined />} loading={busy === a.id} data-testid={`approval-approve-${a.id}`}>
              Approve
            </Button>
          </Popconfirm>
          <Popconfirm
            title="Reject this request?"
            description="The run goes on with your rejection."
            okText="Reject"
            okButtonProps={{ danger: true, 'data-testid': `approval-reject-confirm-${a.id}` }}
            onConfirm={() => onDecide(a, 'rejected')}
          >
            <Button danger icon={<CloseOutlined />} disabled={busy === a.id} data-testid={`approval-reject-${a.id}`}>
              Reject
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <div className="kz-page kz-approvals" data-testid="approvals-page">
      {list.isError ? <Alert type="error" title={errorMessage(list.error, 'The pending approvals could not be read')} /> : null}
      <Table<PendingApproval>
        rowKey="id"
        columns={columns}
        dataSource={approvals}
        loading={list.isPending}
        pagination={false}
        locale={{
          emptyText: (
            <Empty
              data-testid="approvals-empty"
              description="No approval is waiting for you. When a flow's Approval step asks you (or a flow of yours asks someone) for a decision, it is listed here with Approve and Reject, as in the e-mail it sends."
            />
          ),
        }}
      />
    </div>
  );
}
