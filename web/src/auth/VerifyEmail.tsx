import { Result, Typography } from 'antd';
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { call, fetchClient } from '../api/typed';
import { MSG, TERMS_NOTICE } from './validation';

type Status = 'pending' | 'completed' | 'failed';

const TITLES: Record<Status, string> = {
  pending: 'Verification Pending',
  completed: 'Verification Completed',
  failed: 'Verification Failed',
};

/** Confirmation tokens are single-use: one request per token, even if the effect re-runs. */
const requested = new Map<string, Promise<boolean>>();

function confirm(token: string): Promise<boolean> {
  let pending = requested.get(token);
  if (!pending) {
    pending = call(fetchClient.POST('/api/v1/users/email_confirmation', { body: { confirmation_token: token } }))
      .then((res) => res.key === 'VERIFY_EMAIL_SUCCESS')
      .catch(() => false);
    requested.set(token, pending);
  }
  return pending;
}

export function VerifyEmail() {
  const { token = '' } = useParams();
  const [result, setResult] = useState<{ token: string; ok: boolean } | null>(null);

  useEffect(() => {
    let live = true;
    void confirm(token).then((ok) => {
      if (live) setResult({ token, ok });
    });
    return () => {
      live = false;
    };
  }, [token]);

  const status: Status = !result || result.token !== token ? 'pending' : result.ok ? 'completed' : 'failed';

  return (
    <>
      <Result
        status={status === 'pending' ? 'info' : status === 'completed' ? 'success' : 'error'}
        title={<span data-testid="verify-status">{TITLES[status]}</span>}
        subTitle={
          status === 'completed'
            ? 'Your email address is verified. You can sign in now.'
            : status === 'failed'
              ? MSG.verifyFailed
              : 'We are verifying your email address.'
        }
        extra={status === 'completed' ? <Link to="/login">Sign In</Link> : null}
      />
      <Typography.Paragraph type="secondary" className="kz-terms" data-testid="verify-terms">
        {TERMS_NOTICE}
      </Typography.Paragraph>
    </>
  );
}
