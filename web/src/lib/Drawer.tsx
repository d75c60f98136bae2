/**
 * The app's Drawer: antd's, closed by Esc reliably.
 *
 * antd closes a drawer on Esc only when the drawer is the top of its portal stack; any tooltip
 * that opened later (hovering a tile or a button inside the drawer) sits above it, so Esc closed
 * the tooltip and left the drawer open. Every drawer of the shell and the editor uses this one
 * instead: Esc (anywhere on the page) closes the drawer opened last, except while a select's
 * list, a popconfirm or a modal is open over it (Esc closes that first, as antd does).
 */
import { Drawer as AntDrawer, type DrawerProps } from 'antd';
import { useEffect, useId, useRef } from 'react';

/** Open drawers, the one opened last at the end. */
const openDrawers: string[] = [];

/** True when Esc belongs to something open over the drawer. */
function somethingAbove(target: EventTarget | null): boolean {
  if (target instanceof Element && target.closest('[aria-expanded="true"]')) return true;
  const visible = (selector: string) =>
    Array.from(document.querySelectorAll<HTMLElement>(selector)).some((el) => el.style.display !== 'none');
  return visible('.ant-modal-wrap') || visible('.ant-popover:not(.ant-popover-hidden)') || visible('.ant-select-dropdown:not(.ant-select-dropdown-hidden)');
}

/** Esc calls `onClose` while `open`, when this drawer is the one opened last. */
export function useEscapeToClose(open: boolean, onClose: (() => void) | undefined): void {
  const id = useId();
  const close = useRef(onClose);
  useEffect(() => {
    close.current = onClose;
  }, [onClose]);
  useEffect(() => {
    if (!open) return;
    openDrawers.push(id);
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.isComposing || e.defaultPrevented) return;
      if (openDrawers[openDrawers.length - 1] !== id || somethingAbove(e.target)) return;
      close.current?.();
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      const at = openDrawers.lastIndexOf(id);
      if (at >= 0) openDrawers.splice(at, 1);
    };
  }, [open, id]);
}

export function Drawer({ keyboard = true, ...props }: DrawerProps) {
  const { open = false, onClose } = props;
  useEscapeToClose(open && keyboard, onClose ? () => onClose(undefined as never) : undefined);
  // antd's own Esc handling is off: this one closes the drawer once, whatever opened above it.
  return <AntDrawer {...props} keyboard={false} />;
}
