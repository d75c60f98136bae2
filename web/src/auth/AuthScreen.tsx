/**
 * The shared auth screen: a SIGN IN tab and a second tab whose label and content
 * depend on the route (REGISTER NOW, VERIFY EMAIL, FORGOT PASSWORD, RESET PASSWORD).
 */
import { Card, Tabs, Typography } from 'antd';
import { useEffect, type ReactNode } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { useSession } from '../lib/sessionStore';
import { revokeSession } from '../api/logout';
import { useProfile } from '../shell/profileStore';
import { ThemeSwitch } from '../shell/ThemeSwitch';
import { ForgotPassword } from './ForgotPassword';
import { LoginForm } from './LoginForm';
import { ResetPassword } from './ResetPassword';
import { SignupForm } from './SignupForm';
import { VerifyEmail } from './VerifyEmail';

interface SecondTab {
  label: string;
  path: string;
  content: ReactNode;
}

export function secondTabFor(pathname: string): SecondTab {
  if (pathname.startsWith('/verify-email')) return { label: 'VERIFY EMAIL', path: pathname, content: <VerifyEmail /> };
  if (pathname.startsWith('/forgot-password'))
    return { label: 'FORGOT PASSWORD', path: pathname, content: <ForgotPassword /> };
  if (pathname.startsWith('/reset-password'))
    return { label: 'RESET PASSWORD', path: pathname, content: <ResetPassword /> };
  return { label: 'REGISTER NOW', path: '/signup', content: <SignupForm /> };
}

const SIGN_IN_PATHS = ['/', '/login', '/logout'];

export function AuthScreen() {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const session = useSession((s) => s.session);
  const signOut = useSession((s) => s.signOut);
  const signingIn = SIGN_IN_PATHS.includes(pathname);
  const loggingOut = pathname === '/logout';

  // /logout ends the session (cookie and profile) and then shows the sign-in form.
  useEffect(() => {
    if (loggingOut && session) {
      void revokeSession().finally(() => {
        signOut();
        useProfile.getState().clear();
      });
    }
  }, [loggingOut, session, signOut]);

  if (signingIn && session && !loggingOut) return <Navigate to="/dashboard" replace />;

  const second = secondTabFor(pathname);
  const active = signingIn ? 'signin' : 'second';

  return (
    <div className="kz-auth">
      <div className="kz-auth-theme">
        <ThemeSwitch />
      </div>
      <Card className="kz-auth-card">
        <Typography.Title level={3} className="kz-brand">
          Konnectz
        </Typography.Title>
        <Tabs
          activeKey={active}
          centered
          onChange={(key) => navigate(key === 'signin' ? '/login' : second.path)}
          items={[
            { key: 'signin', label: 'SIGN IN', children: signingIn ? <LoginForm /> : null },
            { key: 'second', label: second.label, children: signingIn ? null : second.content },
          ]}
        />
      </Card>
    </div>
  );
}
