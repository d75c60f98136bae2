/**
 * The ALTCHA proof-of-work captcha (npm `altcha` 3.x web component, ALTCHA PoW v2
 * challenges as the api's `altcha` 2.x Python library issues them). It fetches a
 * challenge from the api, solves it in a worker when the user ticks the box, and
 * reports the payload to send with the form ('verified'), or null otherwise.
 * (Widget 3.x takes the challenge URL in `challenge`; 2.x's `challengeurl` is gone.)
 * The widget follows the app's theme: its colours are ALTCHA's CSS variables, set from antd's
 * tokens, and its `color-scheme` is the theme's (its defaults use `light-dark()`).
 */
import { theme } from 'antd';
import type {} from 'altcha/types/react';
import { forwardRef, useEffect, useImperativeHandle, useRef, type CSSProperties } from 'react';
import { useTheme } from '../theme/theme';

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

/** ALTCHA's colour variables from antd's tokens of the current theme. */
export function useCaptchaStyle(): CSSProperties {
  const mode = useTheme((s) => s.mode);
  const { token } = theme.useToken();
  return {
    colorScheme: mode,
    '--altcha-color-base': token.colorBgContainer,
    '--altcha-color-base-content': token.colorText,
    '--altcha-border-color': token.colorBorder,
    '--altcha-checkbox-border-color': token.colorBorder,
    '--altcha-input-background-color': token.colorBgContainer,
    '--altcha-input-color': token.colorText,
    '--altcha-color-primary': token.colorPrimary,
    '--altcha-color-neutral-content': token.colorTextSecondary,
  } as CSSProperties;
}

export const Captcha = forwardRef<CaptchaHandle, Props>(function Captcha({ onChange }, ref) {
  const el = useRef<AltchaElement>(null);
  const style = useCaptchaStyle();
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
      <altcha-widget ref={el} challenge={CAPTCHA_CHALLENGE_URL} style={style} data-theme={style.colorScheme} />
    </div>
  );
});
