import { describe, expect, it } from 'vitest';
import { nodeCardName, pickerName } from '../../lib/names';
import { MAX_ZOOM, MIN_ZOOM } from '../EditorCanvas';
import { nextPageSize, serverSearch } from '../components/useAppSearch';
import { addCondition, blankCondition, removeCondition } from '../nodes/filter/conditions';
import { delayToSave } from '../nodes/card/DelayDrawer';
import { previewCounts } from '../nodes/card/ResponsePanel';
import { TESTING_LABEL, TEST_LABEL } from '../nodes/card/TestSection';
import { scheduleInputs } from '../nodes/scheduler/SchedulerNode';
import { addOn, apiApp, slackApp, webhookApp } from './fixtures';
import { ACTION_OFFSET, applyOperation, CARD_WIDTH, linkRefusal, nodeKindFor, type Operation } from './operations';
import { triggerMovedBackward } from './moves';
import { supportsTimer } from '../nodes/registry';
import { ApiError } from '../../api/typed';
import {
  ACCOUNT_POPUP_POLL_MS,
  canSave,
  configLoadFailure,
  MANAGE_FIELDS_ABOVE,
  MIN_VISIBLE_FIELDS,
  MSG,
  PICKER_FIRST_PAGE,
  PICKER_MAX,
  PICKER_PAGE_STEP,
  POPUP_HEIGHT,
  POPUP_WIDTH,
  RESPONSE_PREVIEW,
  SCRIPT_POPUP_POLL_MS,
  COPIED_MS,
  DELAY_FOR,
  DELAY_UNITS,
  DELAY_UNTIL,
  FILTER_OPERATORS,
  hiddenFieldCount,
  isInteger,
  LONG_TEXT,
  missingMandatory,
  outputKeys,
  responseEntries,
  showManageFields,
  TOAST_MS,
  WEBHOOK_POLL_MS,
  withVisibility,
} from './rules';
import type { ConfigResponse, Flow } from './types';

const run = (...ops: Operation[]) => ops.reduce(applyOperation, { apps: [], links: [] } as Flow);
const field = (key: string, required = false): ConfigResponse => ({ label: key, config_key: key, config_key_required: required });

describe('constants of the spec (§9)', () => {
  it('keeps the timings, zoom, card sizes and thresholds', () => {
    expect([TOAST_MS, WEBHOOK_POLL_MS, COPIED_MS]).toEqual([2500, 7000, 2000]);
    expect([MIN_ZOOM, MAX_ZOOM]).toEqual([0.3, 2]);
    expect([CARD_WIDTH, ACTION_OFFSET]).toEqual([450, 150]);
    expect(LONG_TEXT).toBe(42);
    expect([TEST_LABEL, TESTING_LABEL]).toEqual(['Test & Review', 'Please Wait...']);
    expect(DELAY_UNITS.map((u) => u.id)).toEqual([514, 322, 511, 3228]);
    expect([DELAY_FOR, DELAY_UNTIL]).toEqual([515, 328]);
  });

  it('keeps the popup constants: 800x600, account popup every 2 s, script popup every 1 s', () => {
    expect([POPUP_WIDTH, POPUP_HEIGHT]).toEqual([800, 600]);
    expect([ACCOUNT_POPUP_POLL_MS, SCRIPT_POPUP_POLL_MS]).toEqual([2000, 1000]);
    expect([MIN_VISIBLE_FIELDS, MANAGE_FIELDS_ABOVE, RESPONSE_PREVIEW]).toEqual([5, 5, 3]);
    expect([PICKER_FIRST_PAGE, PICKER_PAGE_STEP, PICKER_MAX]).toEqual([80, 20, 1000]);
  });

  it('asks to authorise the account when its configs are refused (401/403), else to retry', () => {
    expect(configLoadFailure(new ApiError(401, { message: 'token expired' }))).toBe(
      "App events linked with this app couldn't be found! Please Authorize it.",
    );
    expect(configLoadFailure(new ApiError(403, {}))).toBe(MSG.authorize);
    expect(configLoadFailure(new ApiError(502, {}))).toBe("Oops! Something went wrong; we couldn't retrieve the configs. Please try again.");
    expect(configLoadFailure(new TypeError('offline'))).toBe(MSG.noConfigs);
  });

  it('saves only with a chosen trigger that has a konnect_id', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    expect(canSave([], 9)).toBe(false);
    expect(canSave(flow.apps, null)).toBe(false);
    expect(canSave(flow.apps, 9)).toBe(true);
    expect(canSave(flow.apps.slice(1), 9)).toBe(false);
  });

  it('has every message of §8 word for word', () => {
    expect(MSG.notManageable('Webhook')).toBe('Webhook is not manageable.');
    expect(MSG.testTriggerFirst('Slack')).toBe('Test Your Slack after testing your Triggering app');
    expect([MSG.triggerDelete, MSG.triggerDeleteHint]).toEqual([
      'Cannot delete Trigger while Action present.',
      'Trigger cannot be deleted when an action app is present.',
    ]);
    expect([MSG.integerOnly, MSG.invalidExpiry, MSG.mandatory]).toEqual([
      'Please Fill Integer Only',
      'Please Fill Valid Expiry Number',
      'Please fill the values of mandatory fields before Testing',
    ]);
    expect([MSG.moveBackward, MSG.iteratorOnce]).toEqual(['Can not be move backward as Action app exists', 'The iterator can only be used once.']);
    expect(MSG.webhookMissed).toBe("Sorry, we couldn't catch the webhook! Could you please try again?");
    expect([MSG.noEvents, MSG.noDetails, MSG.nextFieldFailed, MSG.noDetailsConfigs]).toEqual([
      "Couldn't find any events linked with this app! Please give it another try.",
      "Oops! We couldn't fetch app details. Please provide the appropriate inputs.",
      'OOps!! could not fetch app details.Give appropriate inputs',
      "Apologies, we couldn't fetch app details/configs. Please provide the necessary inputs.",
    ]);
    expect(MSG.testFailed).toBe('Unable to process the test with these inputs. Please provide appropriate inputs.');
    expect([MSG.noAccountsTrigger, MSG.noAccountsAction]).toEqual([
      'Please Manage the app by authorizing the accounts as you have no accounts authorised',
      'Please Manage the app by authorizing the accounts',
    ]);
  });

  it('cuts names: node 13 (11 + ..), picker 9 (7 + ...)', () => {
    expect(nodeCardName('Google Sheets')).toBe('Google Sheets');
    expect(nodeCardName('Slack Workspace')).toBe('Slack Works..');
    expect(pickerName('Formatter')).toBe('Formatter');
    expect(pickerName('Data Forwarder')).toBe('Data Fo...');
  });

  it('pages the picker 80, +20 per scroll, up to 1000, and searches the server from 2 characters', () => {
    expect(nextPageSize(80, 1031)).toBe(100);
    expect(nextPageSize(990, 1031)).toBe(1000);
    expect(nextPageSize(1000, 1031)).toBe(1000);
    expect(nextPageSize(80, 60)).toBe(80);
    expect(serverSearch('s')).toBe('');
    expect(serverSearch(' sl ')).toBe('sl');
  });
});

describe('configuration fields (§4)', () => {
  it('shows at least 5 fields, required ones first, the rest behind Add More Fields', () => {
    const fields = withVisibility([field('a'), field('b'), field('r1', true), field('c'), field('r2', true), field('d'), field('e')]);
    expect(fields.filter((f) => f.visible).map((f) => f.config_key)).toEqual(['a', 'b', 'r1', 'c', 'r2']);
    expect(hiddenFieldCount(fields)).toBe(2);
    expect(showManageFields(fields)).toBe(true);
    expect(showManageFields(fields.slice(0, 5))).toBe(false);
  });

  it('shows every required field even beyond 5', () => {
    const fields = withVisibility(Array.from({ length: 7 }, (_, i) => field(`r${i}`, true)).concat(field('x')));
    expect(fields.filter((f) => f.visible)).toHaveLength(7);
  });

  it('finds mandatory fields without a value', () => {
    expect(missingMandatory([{ ...field('a', true), value: ' ' }, { ...field('b', true), value: 'x' }, field('c')]).map((f) => f.config_key)).toEqual(['a']);
  });
});

describe('responses', () => {
  it('lists output keys as dotted paths and flattens values for the key-value view', () => {
    const raw = { id: 7, customer: { name: 'Ada' }, tags: ['a'] };
    expect(outputKeys(raw)).toEqual(['id', 'customer.name', 'tags.0']);
    expect(responseEntries(raw)).toEqual([
      { key: 'id', value: '7' },
      { key: 'customer.name', value: 'Ada' },
      { key: 'tags.0', value: 'a' },
    ]);
  });

  it('shows 3 entries then +N more', () => {
    expect(previewCounts(3, false)).toEqual({ shown: 3, more: 0 });
    expect(previewCounts(8, false)).toEqual({ shown: 3, more: 5 });
    expect(previewCounts(8, true)).toEqual({ shown: 8, more: 0 });
  });
});

describe('rules of §5', () => {
  it('maps each app to its node type', () => {
    expect(nodeKindFor(webhookApp, true)).toBe('WebhookInner');
    expect(nodeKindFor(apiApp, false)).toBe('Api');
    expect(nodeKindFor(addOn('data_forwarder', 'Data Forwarder'), false)).toBe('Api');
    expect(nodeKindFor(addOn('conditioner', 'Filter'), false)).toBe('Filter');
    expect(nodeKindFor(addOn('splitter', 'Splitter'), false)).toBe('InHouse');
    expect(nodeKindFor(addOn('iterator', 'Iterator'), false)).toBe('InHouse');
    expect(nodeKindFor(addOn('scheduler', 'Scheduler'), true)).toBe('Scheduler');
    expect(nodeKindFor(addOn('form_input', 'Form'), true)).toBe('FormInput');
    expect(nodeKindFor(addOn('coupon', 'Coupon'), false)).toBe('Coupon');
    expect(nodeKindFor(slackApp, true)).toBe('TriggerNode');
    expect(nodeKindFor(slackApp, false)).toBe('ActionNode');
  });

  it('offers Set Delay only on nodes that support a timer', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp }, { type: 'addAction', app: addOn('delay', 'Delay') });
    expect(flow.apps.map((n) => supportsTimer(n.data))).toEqual([false, true, false]);
  });

  it('uses the iterator only once', () => {
    const iterator = addOn('iterator', 'Iterator');
    const once = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: iterator });
    expect(applyOperation(once, { type: 'addAction', app: iterator })).toBe(once);
  });

  it('refuses a link that makes an app both source and target', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    expect(linkRefusal(flow, 'node-2', 'node-1')).toBe('The same app cannot serve as both the source and the target for a particular app.');
    expect(linkRefusal(flow, 'node-2', 'node-2')).not.toBeNull();
    expect(applyOperation(flow, { type: 'addLink', source: 'node-2', target: 'node-1' })).toBe(flow);
  });

  it('keeps the trigger from moving backward past an action', () => {
    const flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    expect(triggerMovedBackward(flow.apps)).toBe(false);
    const moved = applyOperation(flow, { type: 'moveNode', id: 'node-1', position: { x: 2000, y: 0 } });
    expect(triggerMovedBackward(moved.apps)).toBe(true);
  });

  it('deleting a middle node closes the chain and renumbers the steps', () => {
    const flow = run(
      { type: 'addTrigger', app: webhookApp },
      { type: 'addAction', app: addOn('conditioner', 'Filter') },
      { type: 'addAction', app: apiApp },
      { type: 'removeNode', id: 'node-2' },
    );
    expect(flow.links.map((l) => [l.source, l.target])).toEqual([['node-1', 'node-3']]);
    expect(flow.apps.map((n) => n.data.app_detail.app_index)).toEqual([1, 2]);
  });

  it('a reset returns the node and its mapped providers to Draft and drops their mapping links', () => {
    let flow = run({ type: 'addTrigger', app: webhookApp }, { type: 'addAction', app: apiApp });
    for (const id of ['node-1', 'node-2'])
      flow = applyOperation(flow, { type: 'updateNodeData', id, patch: { app_status: { type: 'Success' }, response_payload: { display_message: 'ok', raw_response: { a: 1 }, konnect_activity_id: 1, konnect_id: 1, test_status: 'Success' } } });
    flow = applyOperation(flow, { type: 'addLink', source: 'node-1', target: 'node-2', sourceHandle: 'a', targetHandle: 'body' });
    const reset = applyOperation(flow, { type: 'resetNode', id: 'node-2', full: false });
    expect(reset.apps.map((n) => n.data.app_status.type)).toEqual(['Draft', 'Draft']);
    expect(reset.apps[1].data.response_payload).toBeNull();
    expect(reset.links).toHaveLength(1);
    expect(reset.links[0].sourceHandle).toBeNull();
  });

  it('has the twelve filter operators; +And/+OR join the previous condition; the last removal leaves a blank', () => {
    expect(FILTER_OPERATORS).toHaveLength(12);
    let list = [blankCondition()];
    list = addCondition(list, 'OR');
    expect(list.map((c) => c.joinWith)).toEqual(['OR', '']);
    list = removeCondition(list, list[1].id);
    expect(list).toHaveLength(1);
    expect(list[0].joinWith).toBe('');
    list = removeCondition(list, list[0].id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ field: '', operator: '' });
  });

  it('accepts whole numbers only in delay and expiry fields', () => {
    expect(isInteger('12')).toBe(true);
    expect(isInteger('1.5')).toBe(false);
    expect(isInteger('ten')).toBe(false);
  });

  it('saves a delay: Delay Until with its date (empty clears), Delay for with unit, value and type', () => {
    const base = { delay_type: DELAY_UNTIL, delay_unit: null, delay_value: '', value: '' };
    expect(delayToSave(base)).toEqual({ timer: null, ready: false });
    expect(delayToSave({ ...base, value: '2030-01-01T10:00:00' })).toMatchObject({ ready: true });
    expect(delayToSave({ ...base, delay_type: DELAY_FOR, delay_value: '5' })).toBe('incomplete');
    expect(delayToSave({ ...base, delay_type: DELAY_FOR, delay_value: '5', delay_unit: 514 })).toMatchObject({ ready: true });
  });

  it('shows the scheduler inputs of each kind', () => {
    expect(scheduleInputs('Once')).toMatchObject({ date: true, time: true, every: false });
    expect(scheduleInputs('DaysOfTheWeek')).toMatchObject({ days: true, time: true });
    expect(scheduleInputs('DaysOfTheMonth')).toMatchObject({ dates: true });
    expect(scheduleInputs('AtRegularIntervals', 'Minutes')).toMatchObject({ every: true, time: false });
    expect(scheduleInputs('AtRegularIntervals', 'Days')).toMatchObject({ every: true, time: true });
  });
});
