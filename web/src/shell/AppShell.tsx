import {
  ApartmentOutlined,
  AuditOutlined,
  AppstoreOutlined,
  CommentOutlined,
  HistoryOutlined,
  HomeOutlined,
  LogoutOutlined,
  PlusOutlined,
  RobotOutlined,
  ToolOutlined,
  UserOutlined,
} from '@ant-design/icons';
import { Avatar, Button, Dropdown, Layout, Menu, Spin, Tooltip, Typography } from 'antd';
import { Suspense, useEffect, type ReactNode } from 'react';
import { Outlet, useLocation, useNavigate } from 'react-router';
import { activeNavKey, headingFor, NAV, type NavKey } from './nav';
import { useProfile } from './profileStore';
import { ThemeSwitch } from './ThemeSwitch';

const ICONS: Record<NavKey, ReactNode> = {
  home: <HomeOutlined />,
  applications: <AppstoreOutlined />,
  flows: <ApartmentOutlined />,
  chatflows: <CommentOutlined />,
  agentflows: <RobotOutlined />,
  tools: <ToolOutlined />,
  history: <HistoryOutlined />,
  approvals: <AuditOutlined />,
};

export function AppShell() {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const profile = useProfile((s) => s.profile);
  const loadProfile = useProfile((s) => s.load);
  const active = activeNavKey(pathname);

  useEffect(() => {
    void loadProfile();
  }, [loadProfile]);

  // The /logout route clears the session; leaving the shell first avoids the no-session redirect to /login.
  const logout = () => navigate('/logout', { replace: true });

  const initial = (profile?.first_name || profile?.email || '?').charAt(0).toUpperCase();

  return (
    <Layout className="kz-shell">
      <Layout.Sider width={200} className="kz-sider" breakpoint="lg" collapsedWidth={64}>
        <div className="kz-logo" onClick={() => navigate('/dashboard')}>
          Konnectz
        </div>
        <Menu
          mode="inline"
          selectedKeys={active ? [active] : []}
          onClick={({ key }) => navigate(NAV.find((n) => n.key === key)?.path ?? '/dashboard')}
          items={NAV.map((n) => ({
            key: n.key,
            icon: ICONS[n.key],
            label: <span data-testid={`nav-${n.key}`}>{n.label}</span>,
          }))}
        />
        <div className="kz-sider-footer">
          <ThemeSwitch />
          <Tooltip title="Logout">
            <Button type="text" icon={<LogoutOutlined />} onClick={logout} aria-label="Logout" data-testid="logout" />
          </Tooltip>
        </div>
      </Layout.Sider>
      <Layout>
        <Layout.Header className="kz-header">
          <Typography.Title level={4} className="kz-heading" data-testid="page-heading">
            {headingFor(pathname)}
          </Typography.Title>
          <div className="kz-header-actions">
            <Button type="primary" icon={<PlusOutlined />} onClick={() => navigate('/create')} data-testid="create-flow">
              Create Flow
            </Button>
            <Dropdown
              trigger={['click']}
              menu={{
                items: [{ key: 'account', icon: <UserOutlined />, label: 'Manage Account' }],
                onClick: () => navigate('/account/profile'),
              }}
            >
              <Avatar
                className="kz-avatar"
                src={profile?.image_url?.startsWith('http') ? profile.image_url : undefined}
                data-testid="profile-avatar"
              >
                {initial}
              </Avatar>
            </Dropdown>
          </div>
        </Layout.Header>
        <Layout.Content className="kz-content">
          <Suspense fallback={<Spin className="kz-page-loading" size="large" />}>
            <Outlet />
          </Suspense>
        </Layout.Content>
      </Layout>
    </Layout>
  );
}
