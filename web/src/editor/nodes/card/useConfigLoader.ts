/** Loads an event's configuration fields and their options in sequence (spec §4 Event, account and configuration). */
import { useCallback } from 'react';
import { useToast } from '../../../lib/useToast';
import { useEditorStoreApi } from '../../EditorContext';
import { configDetails, eventConfig, fetchFields } from '../../api/editorApi';
import { configLoadFailure, MSG, TOAST_MS, withVisibility } from '../../model/rules';
import type { ConfigResponse, FlowNode } from '../../model/types';
import { kindOf } from '../registry';

/** Kinds without option fetching (the webhook, the filter). */
const noOptions = (n: FlowNode) => kindOf(n.data)?.optionsFetch === false;

function chosenValues(fields: ConfigResponse[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) if (!f.additional && f.value !== undefined && f.value !== null && f.value !== '') out[f.config_key] = String(f.value);
  return out;
}

export function useConfigLoader(id: string) {
  const store = useEditorStoreApi();
  const toast = useToast();
  const node = useCallback((): FlowNode | undefined => store.getState().apps.find((n) => n.id === id), [store, id]);
  const setFields = useCallback(
    (fields: ConfigResponse[], extra: Partial<FlowNode['data']> = {}) => store.getState().patchNode(id, { configResponses: fields, ...extra }),
    [store, id],
  );

  /** Options of one field (static ones come with the field; dynamic ones through the account). */
  const loadOptions = useCallback(
    async (configKey: string, prevSequence?: number) => {
      const n = node();
      const ev = n?.data.selectedEvent;
      if (!n || !ev || noOptions(n)) return;
      const fields = n.data.configResponses ?? [];
      try {
        const res = await configDetails(n.data.app_detail.id, ev.id, n.data.app_detail.side, configKey, {
          accountId: n.data.selectedAccount?.id ?? null,
          prevSequence,
          chosen: chosenValues(fields),
        });
        const now = node()?.data.configResponses ?? fields;
        setFields(now.map((f) => (f.config_key === configKey ? { ...f, options: res.options } : f)));
      } catch {
        void toast.warning(prevSequence === undefined ? MSG.noDetails : MSG.nextFieldFailed, TOAST_MS / 1000);
      }
    },
    [node, setFields, toast],
  );

  /** The event's configuration list, then the options of the field with sequence 1. */
  const load = useCallback(async () => {
    const n = node();
    const ev = n?.data.selectedEvent;
    if (!n || !ev || kindOf(n.data)?.configFetch === false) return;
    try {
      const res = await eventConfig(n.data.app_detail.id, ev.id, n.data.app_detail.side, n.data.selectedAccount?.id ?? null);
      const fields: ConfigResponse[] = res.app_event_configurations.map((c) => ({
        label: c.label,
        config_key: c.config_key,
        key_value_type: c.key_value_type,
        type: c.type,
        config_key_required: c.config_key_required,
        sequence: c.sequence,
        options: c.options ?? [],
        dynamic: c.dynamic ?? false,
        depends_on: c.depends_on ?? [],
        ...(c.help ? { help: c.help } : {}),
        value: c.default === null || c.default === undefined ? '' : String(c.default),
      }));
      setFields(withVisibility(fields), {
        app_status: { ...n.data.app_status, hasSequence: fields.some((f) => (f.sequence ?? 0) >= 1) },
        fetchFieldStatus: res.fetch_fields,
      });
      const first = fields.find((f) => f.sequence === 1);
      if (first?.dynamic) await loadOptions(first.config_key);
    } catch (err) {
      void toast.error(configLoadFailure(err), TOAST_MS / 1000);
    }
  }, [node, setFields, loadOptions, toast]);

  /** A choice in a sequenced field loads the next field's options, or (the last) the fetched fields. */
  const afterSelect = useCallback(
    async (field: ConfigResponse, value: string) => {
      const n = node();
      if (!n || !n.data.selectedEvent || noOptions(n) || !(field.sequence && field.sequence >= 1)) return;
      const fields = n.data.configResponses ?? [];
      const next = fields.find((f) => f.sequence === (field.sequence ?? 0) + 1);
      if (next) {
        if (next.dynamic) await loadOptions(next.config_key, field.sequence);
        return;
      }
      if (!n.data.fetchFieldStatus) return;
      try {
        const res = await fetchFields(n.data.app_detail.id, n.data.selectedEvent.id, n.data.app_detail.side, field.config_key, {
          accountId: n.data.selectedAccount?.id ?? null,
          selectedValue: value,
          chosen: chosenValues(fields),
        });
        // The fields of an earlier choice (another tool's arguments, another sheet's columns) go; a value
        // typed into a field that stays is kept.
        const now = node()?.data.configResponses ?? fields;
        const before = new Map(now.filter((f) => f.fetched).map((f) => [f.config_key, f]));
        const kept = now.filter((f) => !f.fetched);
        const known = new Set(kept.map((f) => f.config_key));
        const added: ConfigResponse[] = res.fields
          .filter((f) => !known.has(f.config_key))
          .map((f) => ({
            label: f.label,
            config_key: f.config_key,
            key_value_type: f.key_value_type,
            type: f.type,
            config_key_required: f.config_key_required,
            sequence: 0,
            options: f.options ?? [],
            ...(f.help ? { help: f.help } : {}),
            fetched: true,
            value: before.get(f.config_key)?.value ?? '',
          }));
        setFields(withVisibility([...kept, ...added]));
      } catch {
        void toast.warning(MSG.noDetailsConfigs, TOAST_MS / 1000);
      }
    },
    [node, setFields, loadOptions, toast],
  );

  return { load, loadOptions, afterSelect };
}
