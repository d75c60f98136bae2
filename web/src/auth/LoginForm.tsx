import { Button, Checkbox, Form, Input } from 'antd';
import { useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { call, errorMessage, fetchClient } from '../api/typed';
import { DEFAULT_LANG } from '../lib/session';
import { useSession } from '../lib/sessionStore';
import { useToast } from '../lib/useToast';
import { Captcha, type CaptchaHandle } from './Captcha';
import { emailRules, loginPasswordRules, MSG } from './validation';

interface LoginValues {
  email: string;
  password: string;
  rememberMe?: boolean;
}

export function LoginForm() {
  const [form] = Form.useForm<LoginValues>();
  const [loading, setLoading] = useState(false);
  const [captcha, setCaptcha] = useState<string | null>(null);
  const captchaRef = useRef<CaptchaHandle>(null);
  const toast = useToast();
  const navigate = useNavigate();
  const signIn = useSession((s) => s.signIn);

  const onFinish = async (values: LoginValues) => {
    if (loading) return;
    if (!captcha) {
      void toast.error(MSG.captcha);
      return;
    }
    setLoading(true);
    try {
      const rememberMe = Boolean(values.rememberMe);
      const res = await call(
        fetchClient.POST('/api/v1/auth/login', { body: { email: values.email, password: values.password, rememberMe, captcha } }),
      );
      signIn({ token: res.auth_token, keepMeLoggedIn: rememberMe, lang: res.preferred_language || DEFAULT_LANG, appId: null });
      navigate('/dashboard', { replace: true });
    } catch (err) {
      void toast.error(errorMessage(err, 'Something went wrong!'));
      // A captcha solution is single-use: ask for a new one.
      captchaRef.current?.reset();
      setLoading(false);
    }
  };

  // noValidate: the captcha's checkbox is `required`, and the browser's own check would
  // block the submit before our 'Captcha is not verified.' toast could show.
  return (
    <Form form={form} noValidate layout="vertical" onFinish={onFinish} requiredMark={false} initialValues={{ rememberMe: false }}>
      <Form.Item label="Email" name="email" rules={emailRules}>
        <Input type="email" autoComplete="email" placeholder="Email" data-testid="login-email" />
      </Form.Item>
      <Form.Item label="Password" name="password" rules={loginPasswordRules}>
        <Input.Password autoComplete="current-password" placeholder="Password" data-testid="login-password" />
      </Form.Item>
      <div className="kz-auth-row">
        <Form.Item name="rememberMe" valuePropName="checked" noStyle>
          <Checkbox data-testid="login-remember">Keep me logged in</Checkbox>
        </Form.Item>
        <Link to="/forgot-password" data-testid="forgot-password-link">
          Forgot Password
        </Link>
      </div>
      <Form.Item>
        <Captcha ref={captchaRef} onChange={setCaptcha} />
      </Form.Item>
      <Button type="primary" htmlType="submit" block disabled={loading} data-testid="login-submit">
        {loading ? 'Please Wait' : 'Sign In'}
      </Button>
    </Form>
  );
}
