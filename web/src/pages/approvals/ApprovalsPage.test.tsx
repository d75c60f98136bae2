import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryClient } from '../../api/typed';
import { mockFetch, renderAt } from '../../test/utils';
import { ApprovalsPage } from './ApprovalsPage';

const approval = (id: number, message: string) => ({
  id,
  konnect_id: 40 + id,
  konnect_name: `Refunds ${id}`,
  run_id: `run-${id}`,
  step_id: 'node-2',
  approvers: ['boss@example.com'],
  message,
  created_at: '2026-11-29T09:00:00Z',
  until: '2026-11-29T10:00:00Z',
});

describe('ApprovalsPage', () => {
  beforeEach(() => queryClient.clear());

  it('lists the pending approvals with their flow, message and approvers', async () => {
    mockFetch((c) => (c.url === '/api/v1/approvals' ? { body: { approvals: [approval(1, 'Refund order 7?'), approval(2, '')] } } : undefined));
    renderAt(<ApprovalsPage />, '/approvals');
    expect(await screen.findByTestId('approval-flow-1')).toHaveTextContent('Refunds 1');
    expect(screen.getByTestId('approval-message-1')).toHaveTextContent('Refund order 7?');
    expect(screen.getByTestId('approval-message-2')).toHaveTextContent('(no message)');
    expect(screen.getAllByText('boss@example.com')).toHaveLength(2);
    expect(screen.getByTestId('approval-approve-2')).toBeInTheDocument();
    expect(screen.getByTestId('approval-reject-2')).toBeInTheDocument();
    expect(screen.queryByTestId('approvals-empty')).not.toBeInTheDocument();
  });

  it('approves after the confirmation: the decide call, then the list again', async () => {
    let decided = false;
    const calls = mockFetch((c) => {
      if (c.url === '/api/v1/approvals') return { body: { approvals: decided ? [] : [approval(3, 'Pay?')] } };
      if (c.url === '/api/v1/approvals/3/decide' && c.method === 'POST') {
        decided = true;
        return { body: { status: 'approved', message: 'The request was approved. The run goes on.' } };
      }
      return undefined;
    });
    renderAt(<ApprovalsPage />, '/approvals');
    fireEvent.click(await screen.findByTestId('approval-approve-3'));
    fireEvent.click(await screen.findByTestId('approval-approve-confirm-3'));
    await waitFor(() => expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1));
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ decision: 'approved' });
    expect(await screen.findByText('The request was approved. The run goes on.')).toBeInTheDocument();
    expect(await screen.findByTestId('approvals-empty')).toBeInTheDocument();
  });

  it('rejects, and says why when the approval was decided already', async () => {
    const calls = mockFetch((c) => {
      if (c.url === '/api/v1/approvals') return { body: { approvals: [approval(4, 'Pay?')] } };
      if (c.url === '/api/v1/approvals/4/decide')
        return { status: 410, body: { message: 'Already decided: approved by member@example.com at 2026-11-29 09:30 UTC.' } };
      return undefined;
    });
    renderAt(<ApprovalsPage />, '/approvals');
    fireEvent.click(await screen.findByTestId('approval-reject-4'));
    fireEvent.click(await screen.findByTestId('approval-reject-confirm-4'));
    expect(await screen.findByText(/Already decided: approved by member@example.com/)).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ decision: 'rejected' });
  });

  it('says what the page is for when nothing waits', async () => {
    mockFetch((c) => (c.url === '/api/v1/approvals' ? { body: { approvals: [] } } : undefined));
    renderAt(<ApprovalsPage />, '/approvals');
    const empty = await screen.findByTestId('approvals-empty');
    expect(within(empty).getByText(/No approval is waiting for you/)).toBeInTheDocument();
    expect(within(empty).getByText(/Approval step/)).toBeInTheDocument();
  });
});
