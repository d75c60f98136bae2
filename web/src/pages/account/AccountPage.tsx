import { Button, Empty, Form, Input, Select, Skeleton, Tabs, Typography } from 'antd';
import { useEffect, type ReactNode } from 'react';
import { useNavigate, useParams } from 'react-router';
import { $api, errorMessage } from '../../api/typed';
import { NewPasswordFields } from '../../auth/NewPasswordFields';
import { requiredPasswordRules } from '../../auth/validation';
import { useSession } from '../../lib/sessionStore';
import { useToast } from '../../lib/useToast';
import { useProfile } from '../../shell/profileStore';
import { AvatarTab } from './AvatarTab';
import { McpTab } from './McpTab';
import { MembersTab } from './MembersTab';
import { PlanCards } from './PlanChange';
import { planLabel } from './planLabel';

const TABS = [
  { key: 'profile', label: 'Profile' },
  { key: 'avatar', label: 'Avatar' },
  { key: 'password', label: 'Password' },
  { key: 'members', label: 'Members' },
  { key: 'subscription', label: 'Billing & Usage' },
  { key: 'mcp', label: 'MCP tokens' },
];

interface ProfileValues {
  first_name: string;
  last_name: string;
  country: string | null;
  timezone: string | null;
}

/** The spec's form first (GMT offsets, fixed), then regions (IANA zones, with daylight saving time). */
export function timezoneGroups(zones: { value: string; label: string }[]) {
  const option = (z: { value: string; label: string }) => ({ value: z.value, label: z.label });
  const gmt = zones.filter((z) => z.value.startsWith('GMT'));
  const regions = zones.filter((z) => !z.value.startsWith('GMT'));
  return [
    { label: 'GMT offsets', options: gmt.map(option) },
    { label: 'Regions (follow daylight saving time)', options: regions.map(option) },
  ].filter((g) => g.options.length > 0);
}

export function ProfileTab() {
  const [form] = Form.useForm<ProfileValues>();
  const toast = useToast();
  const profile = $api.useQuery('get', '/api/v1/users/profile');
  const options = $api.useQuery('get', '/api/v1/users/profile/options');
  const update = $api.useMutation('post', '/api/v1/users/profile');

  useEffect(() => {
    if (profile.data) form.setFieldsValue(profile.data);
  }, [profile.data, form]);

  if (profile.isPending) return <Skeleton active />;
  if (!profile.data) return <Empty description="Your profile could not be loaded." />;

  const onFinish = async (values: ProfileValues) => {
    try {
      const res = await update.mutateAsync({ body: values });
      if (res.key === 'UPDATE_SUCCESS') {
        void toast.success('Profile updated');
        void profile.refetch();
        void useProfile.getState().load();
      }
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
    }
  };

  return (
    <Form form={form} layout="vertical" onFinish={onFinish} requiredMark={false} className="kz-account-form">
      <Form.Item label="Email">
        <Input value={profile.data.email} disabled data-testid="profile-email" />
      </Form.Item>
      <Form.Item label="First Name" name="first_name" rules={[{ required: true, message: 'First name is a required field' }]}>
        <Input maxLength={100} data-testid="profile-first-name" />
      </Form.Item>
      <Form.Item label="Last Name" name="last_name">
        <Input maxLength={100} data-testid="profile-last-name" />
      </Form.Item>
      <Form.Item label="Country" name="country">
        <Select
          showSearch={{ optionFilterProp: 'label' }}
          allowClear
          loading={options.isPending}
          options={options.data?.countries ?? []}
          placeholder="Select your country"
          data-testid="profile-country"
        />
      </Form.Item>
      <Form.Item label="Time Zone" name="timezone">
        <Select
          showSearch={{ optionFilterProp: 'label' }}
          allowClear
          loading={options.isPending}
          options={timezoneGroups(options.data?.timezones ?? [])}
          placeholder="Select your time zone"
          data-testid="profile-timezone"
        />
      </Form.Item>
      <Typography.Paragraph type="secondary">Plan: {profile.data.current_plan}</Typography.Paragraph>
      <Button type="primary" htmlType="submit" disabled={update.isPending} data-testid="profile-save">
        {update.isPending ? 'Please Wait' : 'Save Changes'}
      </Button>
    </Form>
  );
}

interface PasswordValues {
  current_password: string;
  password: string;
  password_confirmation: string;
}

export function PasswordTab() {
  const [form] = Form.useForm<PasswordValues>();
  const toast = useToast();
  const change = $api.useMutation('post', '/api/v1/users/change_password');

  const onFinish = async (values: PasswordValues) => {
    try {
      const res = await change.mutateAsync({ body: values });
      if (res.key === 'UPDATE_SUCCESS') {
        // The change ended every session; keep this browser signed in with the new token.
        const { session, signIn } = useSession.getState();
        if (session) signIn({ ...session, token: res.auth_token });
        form.resetFields();
        void toast.success('Password updated');
      }
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
    }
  };

  return (
    <Form form={form} layout="vertical" onFinish={onFinish} requiredMark={false} className="kz-account-form">
      <Form.Item label="Current Password" name="current_password" rules={requiredPasswordRules}>
        <Input.Password autoComplete="current-password" data-testid="password-current" />
      </Form.Item>
      <NewPasswordFields testIds={{ password: 'password-new', confirmation: 'password-confirmation' }} />
      <Button type="primary" htmlType="submit" disabled={change.isPending} data-testid="password-save">
        {change.isPending ? 'Please Wait' : 'Change Password'}
      </Button>
    </Form>
  );
}


export function BillingTab() {
  const usage = $api.useQuery('get', '/api/v1/users/usage');
  if (usage.isPending) return <Skeleton active />;
  if (!usage.data) return <Empty description="Your usage could not be loaded." />;
  return (
    <>
      <div data-testid="billing-usage">
        <Typography.Title level={4} data-testid="subscription-plan">
          {planLabel(usage.data.current_plan)}
        </Typography.Title>
      </div>
      <PlanCards current={usage.data.current_plan} />
    </>
  );
}

/** /account/:tab — Profile, Avatar, Password, Members, Billing & Usage, MCP tokens. */
export function AccountPage() {
  const { tab = 'profile' } = useParams();
  const navigate = useNavigate();
  const active = TABS.some((t) => t.key === tab) ? tab : 'profile';
  const content: Record<string, ReactNode> = {
    profile: <ProfileTab />,
    avatar: <AvatarTab />,
    password: <PasswordTab />,
    members: <MembersTab />,
    subscription: <BillingTab />,
    mcp: <McpTab />,
  };
  return (
    <div className="kz-page">
      <Typography.Title level={3}>Manage Account</Typography.Title>
      <Tabs
        activeKey={active}
        onChange={(key) => navigate(`/account/${key}`)}
        items={TABS.map((t) => ({ ...t, children: t.key === active ? content[t.key] : null }))}
      />
    </div>
  );
}
