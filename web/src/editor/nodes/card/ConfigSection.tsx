import { Button, Checkbox, Collapse, List, Space } from 'antd';
import { Drawer } from '../../../lib/Drawer';
import { useEffect, useRef, useState } from 'react';
import { useEditor, useEditorStoreApi } from '../../EditorContext';
import { hiddenFieldCount, showManageFields } from '../../model/rules';
import type { ConfigResponse, FlowNodeData } from '../../model/types';
import { ConfigField } from './ConfigField';
import { useConfigLoader } from './useConfigLoader';

/** Manage Fields: toggles which input fields show; a field whose target port is linked stays on. */
function ManageFieldsDrawer({ id, fields, open, onClose }: { id: string; fields: ConfigResponse[]; open: boolean; onClose: () => void }) {
  const store = useEditorStoreApi();
  const links = useEditor((s) => s.links);
  const linked = (key: string) => links.some((l) => l.target === id && l.targetHandle === key);
  const toggle = (key: string, checked: boolean) => {
    const next = fields.map((f) => (f.config_key === key ? { ...f, checked, visible: checked || Boolean(f.config_key_required) } : f));
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { configResponses: next } });
  };
  return (
    <Drawer open={open} onClose={onClose} title="Manage Fields" size={360} destroyOnHidden>
      <List
        dataSource={fields.filter((f) => !f.additional)}
        renderItem={(f) => (
          <List.Item key={f.config_key}>
            <Checkbox
              checked={Boolean(f.visible)}
              disabled={Boolean(f.config_key_required) || Boolean(f.targetLinked) || linked(f.config_key)}
              onChange={(e) => toggle(f.config_key, e.target.checked)}
              data-testid={`manage-field-${f.config_key}`}
            >
              {f.label || f.config_key}
            </Checkbox>
          </List.Item>
        )}
      />
    </Drawer>
  );
}

/** The configuration section: fields in sequence, at least 5 visible, Add More Fields, Manage Fields. */
export function ConfigSection({ id, data, autoLoad }: { id: string; data: FlowNodeData; autoLoad: boolean }) {
  const store = useEditorStoreApi();
  const { load, loadOptions, afterSelect } = useConfigLoader(id);
  const [manage, setManage] = useState(false);
  const fields = data.configResponses ?? [];
  const inputs = fields.filter((f) => !f.additional);
  const tried = useRef(false);
  useEffect(() => {
    if (autoLoad && inputs.length === 0 && data.selectedEvent && !tried.current) {
      tried.current = true;
      void load();
    }
  }, [autoLoad, inputs.length, data.selectedEvent, load]);

  const setValue = (key: string, value: string) => {
    const next = (store.getState().apps.find((n) => n.id === id)?.data.configResponses ?? fields).map((f) =>
      f.config_key === key && !f.additional ? { ...f, value } : f,
    );
    store.getState().dispatch({ type: 'updateNodeData', id, patch: { configResponses: next } }, `${id}:cfg:${key}`);
  };
  if (inputs.length === 0) return null;
  const hidden = hiddenFieldCount(fields);
  const body = (
    <div className="kz-section">
      {inputs
        .filter((f) => f.visible)
        .map((f) => (
          <ConfigField
            key={f.config_key}
            nodeId={id}
            field={f}
            onChange={(v) => setValue(f.config_key, v)}
            onSelect={(v) => {
              setValue(f.config_key, v);
              void afterSelect(f, v);
            }}
            onOpen={() => f.dynamic && void loadOptions(f.config_key, f.sequence ? f.sequence - 1 : undefined)}
          />
        ))}
      <Space>
        {hidden > 0 && (
          <Button
            size="small"
            onClick={() =>
              store.getState().dispatch({
                type: 'updateNodeData',
                id,
                patch: { configResponses: fields.map((f) => (f.additional ? f : { ...f, visible: true, checked: true })) },
              })
            }
            data-testid={`add-more-fields-${id}`}
          >
            Add More Fields
          </Button>
        )}
        {showManageFields(fields) && (
          <Button size="small" onClick={() => setManage(true)} data-testid={`manage-fields-${id}`}>
            Manage Fields
          </Button>
        )}
      </Space>
      {manage && <ManageFieldsDrawer id={id} fields={fields} open={manage} onClose={() => setManage(false)} />}
    </div>
  );
  return (
    <Collapse
      size="small"
      className="kz-collapse"
      activeKey={data.app_status.collapseConfiguration ? [] : ['cfg']}
      onChange={() =>
        store.getState().patchNode(id, { app_status: { ...data.app_status, collapseConfiguration: !data.app_status.collapseConfiguration } })
      }
      items={[{ key: 'cfg', label: 'Configuration', children: body }]}
    />
  );
}
