/**
 * The flow's Run settings (docs/run-control.md): a deadline, the number of runs at once, and what
 * happens when a run fails. Kept in the editor store, saved as canvas_json.runControl and checked
 * again by the api when the flow is published (its limits are the contracts' run_control.py).
 */
import { SettingOutlined } from '@ant-design/icons';
import { Button, Checkbox, Form, InputNumber, Modal, Select, Space, Typography } from 'antd';
import { useState } from 'react';
import { $api } from '../../api/typed';
import { flowLabel } from '../../lib/names';
import { useEditor } from '../EditorContext';
import type { RunControlSettings } from '../model/types';

export const MAX_CONCURRENCY = 100;
export const MAX_DEADLINE_SECONDS = 7 * 24 * 3600;
export const MAX_DIGEST_MINUTES = 1440;
export const DEFAULT_DIGEST_MINUTES = 60;
/** The flows offered as the failure alert's flow (the owner's first page of flows). */
export const ALERT_FLOW_PAGE = 200;

type Unit = 'seconds' | 'minutes';

export interface RunSettingsValues {
  deadline: number | null;
  deadlineUnit: Unit;
  maxConcurrency: number | null;
  email: boolean;
  alertFlow: number | null;
  digestMinutes: number | null;
}

/** The dialog's fields of saved settings (a deadline in whole minutes shows in minutes). */
export function toValues(settings: RunControlSettings | null): RunSettingsValues {
  const seconds = settings?.deadlineSeconds ?? null;
  const inMinutes = seconds !== null && seconds % 60 === 0;
  return {
    deadline: seconds === null ? null : inMinutes ? seconds / 60 : seconds,
    deadlineUnit: inMinutes ? 'minutes' : 'seconds',
    maxConcurrency: settings?.maxConcurrency ?? null,
    email: settings?.alert?.email ?? false,
    alertFlow: settings?.alert?.runKonnectId ?? null,
    digestMinutes: settings?.alert?.digestMinutes ?? DEFAULT_DIGEST_MINUTES,
  };
}

/** The settings to save of the dialog's fields; null when none is set. */
export function toSettings(values: RunSettingsValues): RunControlSettings | null {
  const deadlineSeconds =
    values.deadline === null || values.deadline === undefined
      ? null
      : Math.round(values.deadline * (values.deadlineUnit === 'minutes' ? 60 : 1));
  const maxConcurrency = values.maxConcurrency ?? null;
  const alerting = values.email || values.alertFlow !== null;
  const alert = alerting
    ? { email: values.email, runKonnectId: values.alertFlow ?? null, digestMinutes: values.digestMinutes ?? DEFAULT_DIGEST_MINUTES }
    : null;
  if (deadlineSeconds === null && maxConcurrency === null && alert === null) return null;
  return { deadlineSeconds, maxConcurrency, alert };
}

/** A one-line summary for the button's tooltip and the dialog's footer. */
export function describe(settings: RunControlSettings | null): string {
  if (!settings) return 'No run settings';
  const parts: string[] = [];
  if (settings.maxConcurrency) parts.push(`${settings.maxConcurrency} at once`);
  if (settings.deadlineSeconds) parts.push(`stops after ${settings.deadlineSeconds} s`);
  if (settings.alert) parts.push('alert on failure');
  return parts.join(', ') || 'No run settings';
}

function AlertFlowSelect({ value, onChange, konnectId }: { value?: number | null; onChange?: (v: number | null) => void; konnectId: number | null }) {
  const flows = $api.useQuery('get', '/api/v1/konnects', { params: { query: { page_size: ALERT_FLOW_PAGE, page_index: 1 } } });
  const options = (flows.data?.konnects ?? [])
    .filter((k) => k.id !== konnectId)
    .map((k) => ({ value: k.id, label: `${flowLabel(k) || `Flow ${k.id}`}${k.status === 'Published' ? '' : ' (not published)'}` }));
  return (
    <Select
      allowClear
      showSearch
      optionFilterProp="label"
      placeholder="None"
      loading={flows.isLoading}
      options={options}
      value={value ?? undefined}
      onChange={(v) => onChange?.(v ?? null)}
      data-testid="run-alert-flow"
      aria-label="Run another of my flows"
    />
  );
}

/** The dialog (its form only mounts while open, so it reads the store's settings each time). */
export function RunSettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const settings = useEditor((s) => s.runControl);
  const setRunControl = useEditor((s) => s.setRunControl);
  const konnectId = useEditor((s) => s.konnectId);
  const [form] = Form.useForm<RunSettingsValues>();
  const unit = Form.useWatch('deadlineUnit', form) ?? 'seconds';

  const apply = async () => {
    let values: RunSettingsValues;
    try {
      values = await form.validateFields();
    } catch {
      return; // the form shows what is wrong
    }
    setRunControl(toSettings(values));
    onClose();
  };

  return (
    <Modal
      open={open}
      title="Run settings"
      onCancel={onClose}
      footer={[
        <Button key="cancel" onClick={onClose} data-testid="run-settings-cancel">
          Cancel
        </Button>,
        <Button key="ok" type="primary" onClick={() => void apply()} data-testid="run-settings-save">
          Apply
        </Button>,
      ]}
    >
      <Typography.Paragraph type="secondary">
        These settings take effect when the flow is published.
      </Typography.Paragraph>
      <Form form={form} layout="vertical" initialValues={toValues(settings)} preserve={false}>
        <Form.Item label="Deadline" extra="A run still going after this is stopped.">
          <Space.Compact>
            <Form.Item
              name="deadline"
              noStyle
              rules={[
                {
                  type: 'number',
                  min: 1,
                  max: unit === 'minutes' ? MAX_DEADLINE_SECONDS / 60 : MAX_DEADLINE_SECONDS,
                  message: 'The deadline must be between 1 second and 7 days',
                },
              ]}
            >
              <InputNumber min={1} precision={0} placeholder="None" aria-label="Deadline" data-testid="run-deadline" />
            </Form.Item>
            <Form.Item name="deadlineUnit" noStyle>
              <Select
                style={{ width: 110 }}
                aria-label="Deadline unit"
                data-testid="run-deadline-unit"
                options={[
                  { value: 'seconds', label: 'seconds' },
                  { value: 'minutes', label: 'minutes' },
                ]}
              />
            </Form.Item>
          </Space.Compact>
        </Form.Item>
        <Form.Item
          name="maxConcurrency"
          label="Max concurrent runs"
          extra="Runs beyond it wait, in the order they came, and show as queued."
          rules={[{ type: 'number', min: 1, max: MAX_CONCURRENCY, message: `Between 1 and ${MAX_CONCURRENCY}` }]}
        >
          <InputNumber min={1} precision={0} placeholder="No limit" data-testid="run-max-concurrency" />
        </Form.Item>
        <Typography.Text strong>When a run fails</Typography.Text>
        <Form.Item name="email" valuePropName="checked" style={{ marginBottom: 8, marginTop: 8 }}>
          <Checkbox data-testid="run-alert-email">E-mail me</Checkbox>
        </Form.Item>
        <Form.Item name="alertFlow" label="Run another of my flows" extra="It gets the failed run's details as its trigger data.">
          <AlertFlowSelect konnectId={konnectId} />
        </Form.Item>
        <Form.Item
          name="digestMinutes"
          label="At most one alert every (minutes)"
          extra="Failures in between are counted in the next alert."
          rules={[{ type: 'number', min: 1, max: MAX_DIGEST_MINUTES, message: `Between 1 and ${MAX_DIGEST_MINUTES} minutes` }]}
        >
          <InputNumber min={1} precision={0} data-testid="run-alert-digest" />
        </Form.Item>
      </Form>
    </Modal>
  );
}

/** The top bar's button and its dialog. */
export function RunSettingsButton() {
  const settings = useEditor((s) => s.runControl);
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button icon={<SettingOutlined />} onClick={() => setOpen(true)} title={describe(settings)} data-testid="run-settings">
        Run settings
      </Button>
      {open ? <RunSettingsDialog open={open} onClose={() => setOpen(false)} /> : null}
    </>
  );
}
