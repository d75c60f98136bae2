/**
 * An app account's rate budget (docs/rate-budgets.md), under the account in the Manage Accounts drawer:
 * "1 request/s - app default · used 3 in the last minute", and a small form to set the account's own
 * rate (0.01 to 1000 requests per second) or clear it (back to the app's rate).
 *
 *   <RateBudget budget={account.rate_budget} onChanged={reload} />
 */
import { Button, InputNumber, Space, Typography } from 'antd';
import { useState } from 'react';
import { $api, errorMessage } from '../api/typed';
import type { components } from '../api/schema';
import { useToast } from '../lib/useToast';
import { MSG_SOMETHING_WRONG } from './constants';

export type RateBudgetInfo = components['schemas']['RateBudgetOut'];

export const MIN_RATE = 0.01;
export const MAX_RATE = 1000;
export const MSG_RATE_BOUNDS = `Enter a rate from ${MIN_RATE} to ${MAX_RATE} requests per second`;

/** "1 request/s", "2.5 requests/s". */
export function rateText(rate: number): string {
  const shown = Number(rate.toPrecision(4)).toString();
  return rate === 1 ? `${shown} request/s` : `${shown} requests/s`;
}

/** The budget's one-line summary: its rate and where it comes from, and its use. */
export function budgetSummary(budget: RateBudgetInfo): string {
  if (budget.rate_rps == null) return 'No rate budget - the app sets none';
  const source = budget.source === 'override' ? 'your setting' : 'app default';
  const used = budget.used_last_minute == null ? 'use unknown' : `used ${budget.used_last_minute} in the last minute`;
  return `${rateText(budget.rate_rps)} - ${source} · ${used}`;
}

export function rateProblem(value: number | null): string | null {
  if (value == null || Number.isNaN(value)) return MSG_RATE_BOUNDS;
  return value < MIN_RATE || value > MAX_RATE ? MSG_RATE_BOUNDS : null;
}

export function RateBudget({ budget, onChanged }: { budget: RateBudgetInfo; onChanged: () => void }) {
  const toast = useToast();
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState<number | null>(budget.rate_limit_rps ?? budget.rate_rps ?? 1);
  const [touched, setTouched] = useState(false);
  const save = $api.useMutation('put', '/api/v1/app_users/{account_id}/rate_budget');
  const problem = rateProblem(value);
  const id = budget.account_id;

  const send = (rate: number | null) => {
    save.mutate(
      { params: { path: { account_id: id } }, body: { rate_limit_rps: rate } },
      {
        onSuccess: () => {
          toast.success(rate == null ? 'Rate budget reset to the app default' : `Rate budget set to ${rateText(rate)}`);
          setEditing(false);
          onChanged();
        },
        onError: (err) => toast.error(errorMessage(err, MSG_SOMETHING_WRONG)),
      },
    );
  };

  return (
    <div data-testid={`rate-budget-${id}`} style={{ fontSize: 12 }}>
      <Space size={4} wrap>
        <Typography.Text type="secondary" data-testid={`rate-budget-summary-${id}`}>
          {budgetSummary(budget)}
        </Typography.Text>
        {!editing ? (
          <Button size="small" type="link" onClick={() => setEditing(true)} data-testid={`rate-budget-edit-${id}`}>
            Set rate
          </Button>
        ) : null}
      </Space>
      {editing ? (
        <form
          aria-label="Rate budget"
          onSubmit={(e) => {
            e.preventDefault();
            setTouched(true);
            if (problem == null && value != null) send(value);
          }}
        >
          <Space size={4} wrap style={{ marginTop: 4 }}>
            <InputNumber
              size="small"
              aria-label="Requests per second"
              data-testid={`rate-budget-input-${id}`}
              value={value}
              step={0.5}
              onChange={(v) => {
                setTouched(true);
                setValue(typeof v === 'number' ? v : null);
              }}
              status={touched && problem ? 'error' : undefined}
              suffix="requests/s"
              style={{ width: 180 }}
            />
            <Button size="small" type="primary" htmlType="submit" loading={save.isPending} data-testid={`rate-budget-save-${id}`}>
              Save
            </Button>
            {budget.rate_limit_rps != null ? (
              <Button size="small" onClick={() => send(null)} data-testid={`rate-budget-clear-${id}`}>
                Use app default
              </Button>
            ) : null}
            <Button size="small" type="text" onClick={() => setEditing(false)}>
              Cancel
            </Button>
          </Space>
          {touched && problem ? (
            <Typography.Text type="danger" role="alert" style={{ display: 'block' }} data-testid={`rate-budget-error-${id}`}>
              {problem}
            </Typography.Text>
          ) : null}
        </form>
      ) : null}
    </div>
  );
}
