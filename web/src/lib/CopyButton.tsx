import { CheckOutlined, CopyOutlined } from '@ant-design/icons';
import { Button } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { COPIED_FEEDBACK_MS } from './constants';

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // Fall back below (insecure origin or denied permission).
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  document.execCommand?.('copy');
  document.body.removeChild(area);
}

/** Copies `text`; the label reads 'Copied' for 2 seconds afterwards. */
export function CopyButton({ text, testId, size }: { text: string; testId?: string; size?: 'small' | 'middle' }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  return (
    <Button
      size={size}
      icon={copied ? <CheckOutlined /> : <CopyOutlined />}
      data-testid={testId}
      onClick={async (e) => {
        e.stopPropagation();
        await copyText(text);
        setCopied(true);
        window.clearTimeout(timer.current);
        timer.current = window.setTimeout(() => setCopied(false), COPIED_FEEDBACK_MS);
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </Button>
  );
}
