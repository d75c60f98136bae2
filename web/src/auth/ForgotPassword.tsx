import { Button, Form, Input, Typography } from 'antd';
import { useState } from 'react';
import { ApiError, call, fetchClient } from '../api/typed';
import { useToast } from '../lib/useToast';
import { emailRules, MSG, TERMS_NOTICE } from './validation';

export function ForgotPassword() {
  const [loading, setLoading] = useState(false);
  const toast = useToast();

  const onFinish = async ({ email }: { email: string }) => {
    setLoading(true);
    try {
      const res = await call(fetchClient.POST('/api/v1/users/reset_password_email', { body: { email } }));
      if (res.key === 'SENT_RESET_INSTRUCTIONS_FAIL') void toast.error(MSG.forgotUnknownUser);
      else void toast.success(MSG.forgotSent(email));
    } catch (err) {
      const unknownUser = err instanceof ApiError && err.body.key === 'SENT_RESET_INSTRUCTIONS_FAIL';
      void toast.error(unknownUser ? MSG.forgotUnknownUser : MSG.forgotDefault);
    } finally {
      setLoading(false);
    }
  };

  return (
    <Form layout="vertical" onFinish={onFinish} requiredMark={false}>
      <Typography.Paragraph type="secondary">Enter your email and we will send you a link to reset your password.</Typography.Paragraph>
      <Form.Item label="Email" name="email" rules={emailRules}>
        <Input type="email" autoComplete="email" data-testid="forgot-email" />
      </Form.Item>
      <Button type="primary" htmlType="submit" block disabled={loading} data-testid="forgot-submit">
        {loading ? 'Please Wait' : 'Continue'}
      </Button>
      <Typography.Paragraph type="secondary" className="kz-terms">
        {TERMS_NOTICE}
      </Typography.Paragraph>
    </Form>
  );
}
