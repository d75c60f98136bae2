import { Button, Form, Input, Result, Typography } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { call, errorMessage, fetchClient } from '../api/typed';
import { useToast } from '../lib/useToast';
import { NewPasswordFields } from './NewPasswordFields';
import { emailRules, MSG, TERMS_NOTICE } from './validation';

type Step = 'email' | 'details' | 'done';

interface DetailsValues {
  first_name: string;
  last_name: string;
  password: string;
  password_confirmation: string;
}

export function SignupForm() {
  const [step, setStep] = useState<Step>('email');
  const [email, setEmail] = useState('');
  const [loading, setLoading] = useState(false);
  const [emailForm] = Form.useForm<{ email: string }>();
  const [detailsForm] = Form.useForm<DetailsValues>();
  const toast = useToast();

  const checkEmail = async ({ email: value }: { email: string }) => {
    setLoading(true);
    try {
      const res = await call(fetchClient.POST('/api/v1/users/user_exists', { body: { email: value } }));
      if (res.key === 'NO_USER') {
        setEmail(value);
        setStep('details');
      } else if (res.key === 'USER_EXISTS') {
        emailForm.setFields([{ name: 'email', errors: [MSG.emailInUse] }]);
      } else {
        void toast.error(res.message || MSG.signupFailed);
      }
    } catch (err) {
      void toast.error(errorMessage(err, MSG.signupFailed));
    } finally {
      setLoading(false);
    }
  };

  const signup = async (values: DetailsValues) => {
    setLoading(true);
    try {
      const res = await call(fetchClient.POST('/api/v1/signup', { body: { email, ...values, is_admin: false } }));
      if (res.key === 'SIGNUP_SUCCESS') setStep('done');
      else void toast.error(res.message || MSG.signupFailed);
    } catch (err) {
      void toast.error(errorMessage(err, MSG.signupFailed));
    } finally {
      setLoading(false);
    }
  };

  if (step === 'done') {
    return (
      <Result
        status="success"
        title="Check your email"
        subTitle={
          <span data-testid="signup-done">
            We have sent a verification link to {email}. Open it to verify your account, then sign in.
          </span>
        }
        extra={<Link to="/login">Back to Sign In</Link>}
      />
    );
  }

  return (
    <>
      {step === 'email' ? (
        <Form form={emailForm} layout="vertical" onFinish={checkEmail} requiredMark={false}>
          <Form.Item label="Email" name="email" rules={emailRules}>
            <Input type="email" autoComplete="email" placeholder="Email" data-testid="signup-email" />
          </Form.Item>
          <Button type="primary" htmlType="submit" block disabled={loading} data-testid="signup-continue">
            {loading ? 'Please Wait' : 'Continue'}
          </Button>
        </Form>
      ) : (
        <Form form={detailsForm} layout="vertical" onFinish={signup} requiredMark={false}>
          <Typography.Paragraph type="secondary">Signing up as {email}</Typography.Paragraph>
          <Form.Item label="First Name" name="first_name" rules={[{ required: true, message: 'First name is a required field' }]}>
            <Input autoComplete="given-name" data-testid="signup-first-name" />
          </Form.Item>
          <Form.Item label="Last Name" name="last_name" rules={[{ required: true, message: 'Last name is a required field' }]}>
            <Input autoComplete="family-name" data-testid="signup-last-name" />
          </Form.Item>
          <NewPasswordFields label="Password" testIds={{ password: 'signup-password', confirmation: 'signup-password-confirmation' }} />
          <Button type="primary" htmlType="submit" block disabled={loading} data-testid="signup-submit">
            {loading ? 'Please Wait' : 'Continue'}
          </Button>
        </Form>
      )}
      <Typography.Paragraph type="secondary" className="kz-terms">
        {TERMS_NOTICE}
      </Typography.Paragraph>
    </>
  );
}
