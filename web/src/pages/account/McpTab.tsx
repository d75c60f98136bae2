import { Alert, Button, Form, Input, Modal, Popconfirm, Select, Table, Tag, Typography } from 'antd';
import { useState } from 'react';
import { $api, errorMessage } from '../../api/typed';
import type { components } from '../../api/schema';
import { useToast } from '../../lib/useToast';

type Token = components['schemas']['McpTokenOut'];
type Made = components['schemas']['McpTokenMade'];

/** The flows offered in the token form: the first page of the account's flows (as the error flow's card). */
const FLOWS_PAGE = 200;

/** /account/mcp — the MCP tokens: which flows an AI assistant may call at /mcp (docs/mcp.md). */
export function McpTab() {
  const toast = useToast();
  const [form] = Form.useForm<{ name: string; konnect_ids: number[] }>();
  const [made, setMade] = useState<Made | null>(null);
  const tokens = $api.useQuery('get', '/api/v1/mcp_tokens');
  const flows = $api.useQuery('get', '/api/v1/konnects', { params: { query: { page_size: FLOWS_PAGE, page_index: 1 } } });
  const create = $api.useMutation('post', '/api/v1/mcp_tokens');
  const revoke = $api.useMutation('delete', '/api/v1/mcp_tokens/{token_id}');
  const names = new Map((flows.data?.konnects ?? []).map((k) => [k.id, k.konnect_name || `Flow ${k.id}`]));

  const onFinish = async (values: { name: string; konnect_ids: number[] }) => {
    try {
      setMade(await create.mutateAsync({ body: values }));
      form.resetFields();
      void tokens.refetch();
    } catch (err) {
      void toast.error(errorMessage(err, 'The token could not be made'));
    }
  };
  const onRevoke = async (id: number) => {
    try {
      await revoke.mutateAsync({ params: { path: { token_id: id } } });
      void toast.success('Token revoked');
      void tokens.refetch();
    } catch (err) {
      void toast.error(errorMessage(err, 'The token could not be revoked'));
    }
  };

  return (
    <div data-testid="mcp-tab">
      <Typography.Paragraph>
        AI assistants and agents call your flows as tools through the MCP server at <Typography.Text code>{window.location.origin}/mcp</Typography.Text>.
        A flow is a tool when it starts with <b>Called by a flow or AI tool</b> with <i>Offer as an MCP tool</i> on, is published, and a token names it.
      </Typography.Paragraph>
      <Form form={form} layout="inline" onFinish={onFinish} style={{ marginBottom: 16 }}>
        <Form.Item name="name" rules={[{ required: true, message: 'Name the token' }]}>
          <Input placeholder="Token name (e.g. Claude desktop)" maxLength={100} data-testid="mcp-token-name" />
        </Form.Item>
        <Form.Item name="konnect_ids" rules={[{ required: true, message: 'Choose the flows it reaches' }]} style={{ minWidth: 320 }}>
          <Select
            mode="multiple"
            placeholder="Flows it may call"
            loading={flows.isPending}
            optionFilterProp="label"
            options={(flows.data?.konnects ?? []).map((k) => ({ value: k.id, label: k.konnect_name || `Flow ${k.id}`, 'data-testid': `mcp-flow-option-${k.id}` }))}
            data-testid="mcp-token-flows"
          />
        </Form.Item>
        <Button type="primary" htmlType="submit" loading={create.isPending} data-testid="mcp-token-create">
          New token
        </Button>
      </Form>
      <Table<Token>
        rowKey="id"
        loading={tokens.isPending}
        dataSource={tokens.data ?? []}
        pagination={false}
        columns={[
          { title: 'Name', dataIndex: 'name' },
          { title: 'Token', dataIndex: 'prefix', render: (p: string) => <Typography.Text code>{p}…</Typography.Text> },
          { title: 'Flows', dataIndex: 'konnect_ids', render: (ids: number[]) => ids.map((id) => names.get(id) ?? `Flow ${id}`).join(', ') },
          { title: 'Last used', dataIndex: 'last_used_at', render: (t: string | null) => (t ? new Date(t).toLocaleString() : 'Never') },
          {
            title: '',
            key: 'state',
            render: (_: unknown, row: Token) =>
              row.revoked_at ? (
                <Tag>Revoked</Tag>
              ) : (
                <Popconfirm title="Revoke this token? Its next call is refused." onConfirm={() => void onRevoke(row.id)}>
                  <Button danger size="small" data-testid={`mcp-token-revoke-${row.id}`}>
                    Revoke
                  </Button>
                </Popconfirm>
              ),
          },
        ]}
      />
      <Modal open={made !== null} title="Your MCP token" onOk={() => setMade(null)} onCancel={() => setMade(null)} cancelButtonProps={{ style: { display: 'none' } }}>
        <Alert type="warning" showIcon message="Copy it now: it is shown this once." style={{ marginBottom: 12 }} />
        <Typography.Paragraph>
          URL: <Typography.Text code copyable>{made?.mcp_url}</Typography.Text>
        </Typography.Paragraph>
        <Typography.Paragraph>
          Header: <Typography.Text code copyable={{ text: `Bearer ${made?.token ?? ''}` }} data-testid="mcp-token-value">{`Authorization: Bearer ${made?.token ?? ''}`}</Typography.Text>
        </Typography.Paragraph>
      </Modal>
    </div>
  );
}
