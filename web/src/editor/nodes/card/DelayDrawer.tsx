import { Button, DatePicker, Input, Select, Space } from 'antd';
import { Drawer } from '../../../lib/Drawer';
import dayjs from 'dayjs';
import { useState } from 'react';
import { useToast } from '../../../lib/useToast';
import { useEditorStoreApi } from '../../EditorContext';
import { DELAY_FOR, DELAY_TYPES, DELAY_UNITS, DELAY_UNTIL, isInteger, MSG, TOAST_MS } from '../../model/rules';
import type { TimerConfig } from '../../model/types';

export const DELAY_TITLE = '-- Set Parameters For Delay To Act';

/** Which timer Save stores: Delay Until needs its date (empty clears), Delay for needs all three. */
export function delayToSave(t: TimerConfig): { timer: TimerConfig | null; ready: boolean } | 'incomplete' {
  if (t.delay_type === DELAY_UNTIL) return t.value ? { timer: t, ready: true } : { timer: null, ready: false };
  if (t.delay_type === DELAY_FOR && t.delay_unit && t.delay_value && isInteger(t.delay_value)) return { timer: t, ready: true };
  return 'incomplete';
}

const EMPTY: TimerConfig = { delay_type: null, delay_unit: null, delay_value: '', value: '' };

/** The Set Delay drawer of a node (and the body of the Delay add-on). */
export function DelayForm({ id, onDone }: { id: string; onDone?: () => void }) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const saved = store.getState().apps.find((n) => n.id === id)?.data.timerConfigs;
  const [t, setT] = useState<TimerConfig>(saved ?? EMPTY);
  const save = () => {
    const result = delayToSave(t);
    if (result === 'incomplete') return;
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { timerConfigs: result.timer, delayReady: result.ready } });
    onDone?.();
  };
  const cancel = () => {
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { timerConfigs: null, delayReady: false } });
    setT(EMPTY);
    onDone?.();
  };
  return (
    <div className="kz-delay nodrag">
      <div className="kz-field">
        <span className="kz-field-label">Delay Type</span>
        <Select
          value={t.delay_type ?? undefined}
          placeholder="Choose a delay type"
          onChange={(delay_type: number) => setT({ ...t, delay_type })}
          options={DELAY_TYPES.map((d) => ({ value: d.id, label: d.name, 'data-testid': `delay-type-${d.id}` }))}
          data-testid={`delay-type-${id}`}
        />
      </div>
      {t.delay_type === DELAY_UNTIL && (
        <div className="kz-field">
          <span className="kz-field-label">Date and time</span>
          <DatePicker
            showTime
            value={t.value ? dayjs(t.value) : null}
            minDate={dayjs()}
            onChange={(d) => setT({ ...t, value: d ? d.format('YYYY-MM-DDTHH:mm:ss') : '' })}
            data-testid={`delay-until-${id}`}
          />
        </div>
      )}
      {t.delay_type === DELAY_FOR && (
        <Space.Compact block>
          <Input
            placeholder="Value"
            value={t.delay_value}
            onChange={(e) => {
              const v = e.target.value;
              if (v && !isInteger(v)) void toast.warning(MSG.integerOnly, TOAST_MS / 1000);
              else setT({ ...t, delay_value: v });
            }}
            data-testid={`delay-value-${id}`}
          />
          <Select
            style={{ minWidth: 140 }}
            placeholder="Unit"
            value={t.delay_unit ?? undefined}
            onChange={(delay_unit: number) => setT({ ...t, delay_unit })}
            options={DELAY_UNITS.map((u) => ({ value: u.id, label: u.name, 'data-testid': `delay-unit-${u.id}` }))}
            data-testid={`delay-unit-${id}`}
          />
        </Space.Compact>
      )}
      <Space className="kz-delay-actions">
        <Button onClick={cancel} data-testid={`delay-cancel-${id}`}>
          Cancel
        </Button>
        <Button type="primary" onClick={save} disabled={delayToSave(t) === 'incomplete'} data-testid={`delay-save-${id}`}>
          Save
        </Button>
      </Space>
    </div>
  );
}

export function DelayDrawer({ id, open, onClose }: { id: string; open: boolean; onClose: () => void }) {
  return (
    <Drawer open={open} onClose={onClose} title={DELAY_TITLE} size={420} destroyOnHidden>
      <DelayForm id={id} onDone={onClose} />
    </Drawer>
  );
}
