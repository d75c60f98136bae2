/**
 * The ALTCHA proof-of-work captcha (npm `altcha` 3.x web component, ALTCHA PoW v2
 * challenges as the api's `altcha` 2.x Python library issues them). It fetches a
 * challenge from the api, solves it in a worker when the user ticks the box, and
 * reports the payload to send with the form ('verified'), or null otherwise.
 * (Widget 3.x takes the challenge URL in `challenge`; 2.x's `challengeurl` is gone.)
 */
import type {} from 'altcha/types/react';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';

export const CAPTCHA_CHALLENGE_URL = '/api/v1/captcha/challenge';

export interface CaptchaHandle {
  reset: () => void;
}

interface AltchaElement extends HTMLElement {
  reset?: () => void;
}


interface Props {
  onChange: (payload: string | null) => void;
}

export const Captcha = forwardRef<CaptchaHandle, Props>(function Captcha({ onChange }, ref) {
  const el = useRef<AltchaElement>(null);
  const onChangeRef = useRef(onChange);

  useEffect(() => {
    onChangeRef.current = onChange;
  }, [onChange]);

  useImperativeHandle(ref, () => ({
    reset: () => {
      el.current?.reset?.();
      onChangeRef.current(null);
    },
  }));

  useEffect(() => {
    // Registers <altcha-widget>; loaded lazily so the auth bundle stays small.
    void import('altcha');
    const node = el.current;
    if (!node) return;
    const handler = (ev: Event) => {
      const detail = (ev as CustomEvent<{ state: string; payload?: string }>).detail;
      onChangeRef.current(detail?.state === 'verified' && detail.payload ? detail.payload : null);
    };
    node.addEventListener('statechange', handler);
    return () => node.removeEventListener('statechange', handler);
  }, []);

  return (
    <div className="kz-captcha" data-testid="login-captcha">
      <altcha-widget ref={el} challenge={CAPTCHA_CHALLENGE_URL} />
    </div>
  );
});
