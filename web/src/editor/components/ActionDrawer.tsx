import { Drawer } from '../../lib/Drawer';
import type { AppOut } from '../api/editorApi';
import { MSG } from '../model/rules';
import { AppPicker } from './AppPicker';

export type DrawerMode = 'actions' | 'addOns';

/** Add-ons that only start flows are not offered as actions. */
export const TRIGGER_ONLY = new Set(['scheduler', 'form_input', 'webhook']);
const hide = (app: AppOut) => TRIGGER_ONLY.has(app.provider);
/** Wide enough for five tiles a row, never wider than most of a small screen. */
const DRAWER_SIZE = 'min(600px, 92vw)';

interface Props {
  mode: DrawerMode | null;
  onClose: () => void;
  onPick: (app: AppOut) => void;
  /** The flow has an iterator already: the iterator tile is disabled, its tooltip says why. */
  hasIterator?: boolean;
}

/** Side drawer picking the next action (add-ons, then catalogue actions) or an add-on. */
export function ActionDrawer({ mode, onClose, onPick, hasIterator = false }: Props) {
  const refusal = (app: AppOut) => (hasIterator && app.provider === 'iterator' ? MSG.iteratorOnce : null);
  return (
    <Drawer
      open={mode !== null}
      onClose={onClose}
      title={mode === 'addOns' ? 'Add Ons' : 'Add Action'}
      size={DRAWER_SIZE}
      destroyOnHidden
      rootClassName="kz-action-drawer"
    >
      {mode === 'addOns' ? (
        <AppPicker key="addOns" listings={['addOns']} onPick={onPick} placeholder="Search in Add Ons" searchTestId="action-drawer-search" hide={hide} refusal={refusal} fill />
      ) : (
        <AppPicker
          key="actions"
          listings={['addOns', 'actions']}
          onPick={onPick}
          placeholder="Search in 1000+ applications"
          searchTestId="action-drawer-search"
          hide={hide}
          refusal={refusal}
          fill
        />
      )}
    </Drawer>
  );
}
