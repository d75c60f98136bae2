import { Button, Form, Typography } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { call, errorMessage, fetchClient } from '../api/typed';
import { RESET_REDIRECT_MS } from '../lib/constants';
import { useToast } from '../lib/useToast';
import { NewPasswordFields } from './NewPasswordFields';
import { MSG, TERMS_NOTICE } from './validation';

interface Values {
  password: string;
  password_confirmation: string;
}

export function ResetPassword() {
  const { token = '' } = useParams();
  const [form] = Form.useForm<Values>();
  const [loading, setLoading] = useState(false);
  const toast = useToast();
  const navigate = useNavigate();
  const timer = useRef<number | undefined>(undefined);

  useEffect(() => () => window.clearTimeout(timer.current), []);

  const onFinish = async (values: Values) => {
    setLoading(true);
    try {
      const res = await call(
        fetchClient.POST('/api/v1/users/update_user_password', { body: { reset_password_token: token, ...values } }),
      );
      if (res.key === 'PASSWORD_UPDATED') {
        void toast.success(res.message || 'Password updated.');
        timer.current = window.setTimeout(() => navigate('/login'), RESET_REDIRECT_MS);
      } else {
        void toast.error(res.message || MSG.forgotDefault);
      }
    } catch (err) {
      void toast.error(errorMessage(err, MSG.forgotDefault));
    } finally {
      setLoading(false);
    }
  };

  return (
    <Form form={form} layout="vertical" onFinish={onFinish} requiredMark={false}>
      <NewPasswordFields testIds={{ password: 'reset-password', confirmation: 'reset-password-confirmation' }} />
      <Button type="primary" htmlType="submit" block disabled={loading} data-testid="reset-submit">
        {loading ? 'Please Wait' : 'Continue'}
      </Button>
      <Typography.Paragraph type="secondary" className="kz-terms">
        {TERMS_NOTICE}
      </Typography.Paragraph>
    </Form>
  );
}
