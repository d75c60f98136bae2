import { Form, Input } from 'antd';
import { confirmationRules, loginPasswordRules } from './validation';

interface Props {
  /** 'Password' on sign-up, 'New Password' on the reset and change forms. */
  label?: string;
  /** data-testid of the password input and of its confirmation. */
  testIds: { password: string; confirmation: string };
}

/**
 * The new password and its confirmation, as fields `password` and `password_confirmation` of the
 * surrounding antd Form: required, at least PASSWORD_MIN_LENGTH characters (the api's own minimum),
 * and a confirmation that must match. Used by sign-up, reset password and the account's Password tab.
 */
export function NewPasswordFields({ label = 'New Password', testIds }: Props) {
  return (
    <>
      <Form.Item label={label} name="password" rules={loginPasswordRules}>
        <Input.Password autoComplete="new-password" data-testid={testIds.password} />
      </Form.Item>
      <Form.Item label="Confirm Password" name="password_confirmation" dependencies={['password']} rules={confirmationRules}>
        <Input.Password autoComplete="new-password" data-testid={testIds.confirmation} />
      </Form.Item>
    </>
  );
}
