import { Drawer } from 'antd';
import type { App } from '../../api/types';
import { useAppList } from '../useAppLists';
import { AppPicker } from './AppPicker';

export type DrawerMode = 'actions' | 'addOns';

/** Side drawer picking the next action (actions and add-ons) or an add-on. */
export function ActionDrawer({ mode, onClose, onPick }: { mode: DrawerMode | null; onClose: () => void; onPick: (app: App) => void }) {
  const actions = useAppList('actions', mode === 'actions');
  const addOns = useAppList('addOns', mode === 'addOns');
  return (
    <Drawer open={mode !== null} onClose={onClose} title={mode === 'addOns' ? 'Add Ons' : 'Add Action'} size={420} destroyOnHidden>
      {mode === 'addOns' ? (
        <AppPicker apps={addOns} onPick={onPick} placeholder="Search in Add Ons" searchTestId="action-drawer-search" />
      ) : (
        <AppPicker apps={actions} onPick={onPick} placeholder="Search in 1000+ applications" searchTestId="action-drawer-search" />
      )}
    </Drawer>
  );
}
