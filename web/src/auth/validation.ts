/** Form rules and texts of the auth screens (spec §5). */
import type { Rule } from 'antd/es/form';
import { PASSWORD_MIN_LENGTH } from '../lib/constants';

export const MSG = {
  emailRequired: 'Email is a required field',
  emailInvalid: 'Invalid email format',
  passwordRequired: 'Password is a required field',
  passwordMin: `Password must be at least ${PASSWORD_MIN_LENGTH} characters`,
  captcha: 'Captcha is not verified.',
  emailInUse: 'E-mail address already in use.',
  signupFailed: 'Something went wrong!',
  passwordMismatch: 'Password do not match. Try again!',
  verifyFailed: 'We were unable to verify this account. Contact us to know more.',
  forgotUnknownUser: "User doesn't exist!",
  forgotDefault: 'Something Went Wrong',
  forgotSent: (email: string) => `We sent forgot password link on ${email}`,
} as const;

export const TERMS_NOTICE =
  'By clicking continue, you agree to the Konnectz Terms & Conditions and Privacy Policy, and you confirm that the details you give us are accurate.';

export const emailRules: Rule[] = [
  { required: true, message: MSG.emailRequired },
  { type: 'email', message: MSG.emailInvalid },
];

export const loginPasswordRules: Rule[] = [
  { required: true, message: MSG.passwordRequired },
  { min: PASSWORD_MIN_LENGTH, message: MSG.passwordMin },
];

export const requiredPasswordRules: Rule[] = [{ required: true, message: MSG.passwordRequired }];

/** The confirmation must equal the `password` field ('Password do not match. Try again!'). */
export const confirmationRules: Rule[] = [
  { required: true, message: MSG.passwordRequired },
  ({ getFieldValue }) => ({
    validator: (_rule, value) =>
      !value || getFieldValue('password') === value ? Promise.resolve() : Promise.reject(new Error(MSG.passwordMismatch)),
  }),
];
