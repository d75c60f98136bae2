import { Button, Empty, Form, Input, InputNumber, Modal, Popconfirm, Select, Skeleton, Space, Statistic, Table, Typography } from 'antd';
import { useState } from 'react';
import { $api, errorMessage } from '../../api/typed';
import type { components } from '../../api/schema';
import { useToast } from '../../lib/useToast';
import { UpgradeLink } from './PlanChange';

type Member = components['schemas']['MemberOut'];
type Access = NonNullable<Member['access']>;
const ACCESS_LEVELS: Access[] = ['Create', 'Create/Delete', 'FULL'];

interface MemberValues {
  first_name: string;
  last_name?: string;
  email: string;
  access?: Access;
  task?: number;
}

/** Add or edit one member: team members get an access level, agency sub-accounts a task quota. */
function MemberModal({
  kind,
  editing,
  open,
  onClose,
}: {
  kind: 'team' | 'agency';
  editing: Member | null;
  open: boolean;
  onClose: (changed: boolean) => void;
}) {
  const [form] = Form.useForm<MemberValues>();
  const toast = useToast();
  const addTeam = $api.useMutation('post', '/api/v1/members/add_team_user');
  const updateTeam = $api.useMutation('post', '/api/v1/members/update_team_user');
  const addAgency = $api.useMutation('post', '/api/v1/members/add_agency_user');
  const updateAgency = $api.useMutation('post', '/api/v1/members/update_agency_user');
  const busy = addTeam.isPending || updateTeam.isPending || addAgency.isPending || updateAgency.isPending;

  const onFinish = async (v: MemberValues) => {
    const names = { first_name: v.first_name, last_name: v.last_name ?? '' };
    try {
      if (kind === 'team') {
        if (editing) await updateTeam.mutateAsync({ body: { ...names, sub_account_id: editing.id, access: v.access } });
        else await addTeam.mutateAsync({ body: { ...names, email: v.email, access: v.access ?? 'Create' } });
      } else if (editing) {
        await updateAgency.mutateAsync({ body: { ...names, sub_account_id: editing.id, task: v.task } });
      } else {
        await addAgency.mutateAsync({ body: { ...names, email: v.email, task: v.task ?? 0 } });
      }
      void toast.success(editing ? 'Member updated' : 'Member added');
      form.resetFields();
      onClose(true);
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
    }
  };

  return (
    <Modal
      open={open}
      title={editing ? 'Edit Member' : kind === 'team' ? 'Add Team Member' : 'Add Sub-account'}
      onCancel={() => onClose(false)}
      footer={null}
      destroyOnHidden
    >
      <Form
        form={form}
        layout="vertical"
        requiredMark={false}
        onFinish={onFinish}
        initialValues={
          editing
            ? { first_name: editing.first_name, last_name: editing.last_name, email: editing.email, access: editing.access ?? undefined, task: editing.task ?? undefined }
            : { access: 'Create', task: 0 }
        }
      >
        <Form.Item label="First Name" name="first_name" rules={[{ required: true, message: 'First name is a required field' }]}>
          <Input maxLength={100} data-testid="member-first-name" />
        </Form.Item>
        <Form.Item label="Last Name" name="last_name">
          <Input maxLength={100} data-testid="member-last-name" />
        </Form.Item>
        <Form.Item
          label="Email"
          name="email"
          rules={[
            { required: true, message: 'Email is a required field' },
            { type: 'email', message: 'Invalid email format' },
          ]}
        >
          <Input disabled={!!editing} data-testid="member-email" />
        </Form.Item>
        {kind === 'team' ? (
          <Form.Item label="Access" name="access" rules={[{ required: true }]}>
            <Select options={ACCESS_LEVELS.map((a) => ({ value: a, label: a }))} data-testid="member-access" />
          </Form.Item>
        ) : (
          <Form.Item label="Tasks" name="task" rules={[{ required: true, message: 'Tasks is a required field' }]}>
            <InputNumber min={0} max={1_000_000_000} precision={0} data-testid="member-task" />
          </Form.Item>
        )}
        <Button type="primary" htmlType="submit" disabled={busy} data-testid="member-save">
          {busy ? 'Please Wait' : 'Save'}
        </Button>
      </Form>
    </Modal>
  );
}

function useEditor() {
  const [state, setState] = useState<{ open: boolean; editing: Member | null }>({ open: false, editing: null });
  return {
    ...state,
    add: () => setState({ open: true, editing: null }),
    edit: (m: Member) => setState({ open: true, editing: m }),
    close: () => setState({ open: false, editing: null }),
  };
}

type MemberList = { refetch: () => Promise<unknown> };

/** The members table with Edit and Delete on each row, and the add/edit modal under it. */
function MemberTable({
  kind,
  rows,
  emptyText,
  columns,
  list,
  remove,
  editor,
}: {
  kind: 'team' | 'agency';
  rows: Member[];
  emptyText: string;
  columns: { title: string; dataIndex: keyof Member }[];
  list: MemberList;
  remove: (id: number) => Promise<unknown>;
  editor: ReturnType<typeof useEditor>;
}) {
  const toast = useToast();
  const onDelete = async (m: Member) => {
    try {
      await remove(m.id);
      void toast.success('Member removed');
      void list.refetch();
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
    }
  };
  return (
    <>
      <Table<Member>
        rowKey="id"
        dataSource={rows}
        pagination={false}
        locale={{ emptyText }}
        columns={[
          ...columns,
          {
            title: 'Action',
            render: (_, m) => (
              <Space>
                <Button size="small" onClick={() => editor.edit(m)} data-testid={`member-edit-${m.id}`}>
                  Edit
                </Button>
                <Popconfirm title={`Remove ${m.email}?`} onConfirm={() => onDelete(m)} okText="Delete">
                  <Button size="small" danger data-testid={`member-delete-${m.id}`}>
                    Delete
                  </Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <MemberModal
        kind={kind}
        open={editor.open}
        editing={editor.editing}
        onClose={(changed) => {
          editor.close();
          if (changed) void list.refetch();
        }}
      />
    </>
  );
}

function TeamMembers() {
  const list = $api.useQuery('get', '/api/v1/members/list_team_users');
  const remove = $api.useMutation('get', '/api/v1/members/remove_team_user');
  const editor = useEditor();
  if (list.isPending) return <Skeleton active />;
  if (!list.data) return <Empty description={errorMessage(list.error, 'Your team could not be loaded.')} />;
  return (
    <div data-testid="team-members">
      <Space style={{ marginBottom: 16 }}>
        <Typography.Text>
          Team accounts: {list.data.total} of {list.data.allowed_limit}
        </Typography.Text>
        <Button type="primary" onClick={editor.add} data-testid="member-add">
          Add
        </Button>
      </Space>
      <MemberTable
        kind="team"
        rows={list.data.team_users}
        emptyText="No team members yet."
        columns={[
          { title: 'Name', dataIndex: 'name' },
          { title: 'Email', dataIndex: 'email' },
          { title: 'Access', dataIndex: 'access' },
        ]}
        list={list}
        remove={(id) => remove.mutateAsync({ params: { query: { sub_account_id: id } } })}
        editor={editor}
      />
    </div>
  );
}

function AgencyMembers() {
  const list = $api.useQuery('get', '/api/v1/members/list_agency_users');
  const remove = $api.useMutation('get', '/api/v1/members/remove_agency_user');
  const editor = useEditor();
  if (list.isPending) return <Skeleton active />;
  if (!list.data) return <Empty description={errorMessage(list.error, 'Your sub-accounts could not be loaded.')} />;
  const d = list.data;
  return (
    <div data-testid="agency-members">
      <Space size="large" style={{ marginBottom: 16 }} wrap>
        <Statistic title="Total Tasks" value={d.total_tasks} />
        <Statistic title="Tasks Consumed" value={d.task_consumed} />
        <Statistic title="Sub-accounts" value={`${d.total_subaccounts} / ${d.allowed_subaccount_limit}`} />
        <Button type="primary" onClick={editor.add} disabled={d.total_subaccounts >= d.allowed_subaccount_limit} data-testid="member-add">
          Add
        </Button>
      </Space>
      <MemberTable
        kind="agency"
        rows={d.sub_accounts}
        emptyText="No sub-accounts yet."
        columns={[
          { title: 'Name', dataIndex: 'name' },
          { title: 'Email', dataIndex: 'email' },
          { title: 'Tasks', dataIndex: 'task' },
          { title: 'Consumed', dataIndex: 'task_consumed' },
          { title: 'Remaining', dataIndex: 'remaining' },
        ]}
        list={list}
        remove={(id) => remove.mutateAsync({ params: { query: { sub_account_id: id } } })}
        editor={editor}
      />
    </div>
  );
}

/** /account/members: Team plan — team accounts with access levels; Agency plan — sub-accounts with tasks. */
export function MembersTab() {
  const profile = $api.useQuery('get', '/api/v1/users/profile');
  if (profile.isPending) return <Skeleton active />;
  const plan = profile.data?.current_plan ?? 'Free';
  if (plan === 'Team') return <TeamMembers />;
  if (plan === 'Agency') return <AgencyMembers />;
  return (
    <Empty description={`This feature is not available for ${plan}`} data-testid="members-not-available">
      <Typography.Paragraph type="secondary">Team members come with the Team plan, sub-accounts with the Agency plan.</Typography.Paragraph>
      <UpgradeLink />
    </Empty>
  );
}
