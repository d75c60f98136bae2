import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderAt } from '../../test/utils';
import { EvaluationsPanel, parseCases } from './EvaluationsPanel';

const CASES = [
  { name: 'praise', input: { review: 'great' }, checks: [{ op: 'equals', step: 'node-2', path: 'data.sentiment', value: 'positive' }] },
  { name: 'sarcasm', input: { review: 'oh sure' }, checks: [{ op: 'equals', step: 'node-2', path: 'data.sentiment', value: 'negative' }] },
];
const SET = { konnect_id: 7, cases: CASES, threshold: 0.75, stop_before_effects: true, updated_at: '2026-11-29T10:00:00Z', last_run: null };
const RUN = {
  konnect_id: 7,
  revision: null,
  score: 0.5,
  passed: 1,
  total: 2,
  threshold: 0.75,
  passed_threshold: false,
  seconds: 0.8,
  cases: [
    { name: 'praise', passed: true, status: 'STOPPED', error: null, seconds: 0.4, checks: [{ op: 'equals', step: 'node-2', path: 'data.sentiment', passed: true, actual: 'positive', reason: null }] },
    {
      name: 'sarcasm',
      passed: false,
      status: 'STOPPED',
      error: null,
      seconds: 0.4,
      checks: [{ op: 'equals', step: 'node-2', path: 'data.sentiment', passed: false, actual: 'positive', reason: 'expected "negative"' }],
    },
  ],
};

describe('parseCases', () => {
  it('says why a text is not a list of cases', () => {
    expect(parseCases('[{"name": "a"}]')).toEqual({ cases: [{ name: 'a' }] });
    expect(parseCases('{"name": "a"}')).toEqual({ error: expect.stringContaining('must be a JSON list') });
    expect(parseCases('[oops')).toEqual({ error: expect.stringContaining('not valid JSON') });
  });
});

describe('EvaluationsPanel', () => {
  beforeEach(() => queryClient.clear());

  it('saves the cases and runs them on the draft, showing the score and the failed checks', async () => {
    const calls = mockFetch((c) => {
      if (c.url === '/api/v1/konnects/7/evaluations' && c.method === 'GET') return { body: SET };
      if (c.url === '/api/v1/konnects/7/evaluations' && c.method === 'PUT') return { body: { ...SET, ...(c.body as object) } };
      if (c.url === '/api/v1/konnects/7/evaluations/run' && c.method === 'POST') return { body: RUN };
      return undefined;
    });
    renderAt(<EvaluationsPanel konnectId={7} open onClose={() => undefined} />);
    const box = await screen.findByTestId('evaluation-cases');
    await waitFor(() => expect((box as HTMLTextAreaElement).value).toContain('sarcasm'));
    await userEvent.click(screen.getByText('Saved draft'));
    await userEvent.click(screen.getByTestId('evaluation-run'));

    expect(await screen.findByTestId('evaluation-score')).toHaveTextContent('50% (1/2)');
    expect(screen.getByTestId('evaluation-result')).toHaveTextContent('Below the threshold 0.75 on the draft');
    expect(screen.getByTestId('evaluation-case-sarcasm')).toHaveTextContent('Fail');
    expect(screen.getByTestId('evaluation-failed-check')).toHaveTextContent('node-2.data.sentiment equals: expected "negative" (found "positive")');
    const put = calls.find((c) => c.method === 'PUT');
    expect(put?.body).toEqual({ cases: CASES, threshold: 0.75, stop_before_effects: true });
    const post = calls.find((c) => c.url.endsWith('/run'));
    expect(post?.body).toEqual({ revision: 'draft' });
  }, 30_000);

  it('shows the api’s refusal of a set and does not run it', async () => {
    const calls = mockFetch((c) => {
      if (c.method === 'GET') return { body: { ...SET, cases: [], updated_at: null } };
      if (c.method === 'PUT') return { status: 422, body: { message: 'the case\'s input is 70000 bytes as JSON: at most 64 KiB' } };
      return undefined;
    });
    renderAt(<EvaluationsPanel konnectId={7} open onClose={() => undefined} />);
    const box = await screen.findByTestId('evaluation-cases');
    await waitFor(() => expect((box as HTMLTextAreaElement).value).toContain('praise')); // the example case
    await userEvent.click(screen.getByTestId('evaluation-run'));
    expect(await screen.findByTestId('evaluation-problem')).toHaveTextContent('at most 64 KiB');
    expect(calls.some((c) => c.url.endsWith('/run'))).toBe(false);
  }, 30_000);
});
