import { Drawer } from '../../lib/Drawer';
import type { AppOut } from '../api/editorApi';
import type { FlowNode } from '../model/types';
import { addRefusal, isTriggerOnly } from '../nodes/registry';
import { AppPicker } from './AppPicker';

export type DrawerMode = 'actions' | 'addOns';

/** Add-ons that only start flows (their kind says triggerOnly) are not offered as actions. */
const hide = (app: AppOut) => isTriggerOnly(app.provider);
/** Wide enough for five tiles a row, never wider than most of a small screen. */
const DRAWER_SIZE = 'min(600px, 92vw)';

interface Props {
  mode: DrawerMode | null;
  onClose: () => void;
  onPick: (app: AppOut) => void;
  /** The flow's nodes: a once-only kind (the iterator) already used has its tile disabled, its tooltip says why. */
  apps?: readonly FlowNode[];
}

/** Side drawer picking the next action (add-ons, then catalogue actions) or an add-on. */
export function ActionDrawer({ mode, onClose, onPick, apps = [] }: Props) {
  const refusal = (app: AppOut) => addRefusal(apps, app.provider);
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
