import { Drawer } from 'antd';
import type { AppOut } from '../api/editorApi';
import { AppPicker } from './AppPicker';

export type DrawerMode = 'actions' | 'addOns';

/** Side drawer picking the next action (add-ons, then catalogue actions) or an add-on. */
export function ActionDrawer({ mode, onClose, onPick }: { mode: DrawerMode | null; onClose: () => void; onPick: (app: AppOut) => void }) {
  return (
    <Drawer open={mode !== null} onClose={onClose} title={mode === 'addOns' ? 'Add Ons' : 'Add Action'} size={420} destroyOnHidden>
      {mode === 'addOns' ? (
        <AppPicker key="addOns" listings={['addOns']} onPick={onPick} placeholder="Search in Add Ons" searchTestId="action-drawer-search" />
      ) : (
        <AppPicker
          key="actions"
          listings={['addOns', 'actions']}
          onPick={onPick}
          placeholder="Search in 1000+ applications"
          searchTestId="action-drawer-search"
        />
      )}
    </Drawer>
  );
}
