import { Drawer } from 'antd';
import type { AppOut } from '../api/editorApi';
import { AppPicker } from './AppPicker';

export type DrawerMode = 'actions' | 'addOns';

/** Add-ons that only start flows are not offered as actions. */
export const TRIGGER_ONLY = new Set(['scheduler', 'form_input', 'webhook']);
const hide = (app: AppOut) => TRIGGER_ONLY.has(app.provider);

/** Side drawer picking the next action (add-ons, then catalogue actions) or an add-on. */
export function ActionDrawer({ mode, onClose, onPick }: { mode: DrawerMode | null; onClose: () => void; onPick: (app: AppOut) => void }) {
  return (
    <Drawer open={mode !== null} onClose={onClose} title={mode === 'addOns' ? 'Add Ons' : 'Add Action'} size={420} destroyOnHidden>
      {mode === 'addOns' ? (
        <AppPicker key="addOns" listings={['addOns']} onPick={onPick} placeholder="Search in Add Ons" searchTestId="action-drawer-search" hide={hide} />
      ) : (
        <AppPicker
          key="actions"
          listings={['addOns', 'actions']}
          onPick={onPick}
          placeholder="Search in 1000+ applications"
          searchTestId="action-drawer-search"
          hide={hide}
        />
      )}
    </Drawer>
  );
}
