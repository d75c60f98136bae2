/**
 * Changing plans. Konnectz has no payment provider: an administrator assigns plans (the api's
 * POST /api/v1/admin/users/plan, or `python -m konnectz_api plan set EMAIL PLAN` on the server).
 * So every plan's button opens a modal that says exactly that, with the user's email filled in.
 */
import { Button, Card, Col, Modal, Row, Typography } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { $api } from '../../api/typed';
import { CopyButton } from '../../lib/CopyButton';
import { useProfile } from '../../shell/profileStore';
import { planLabel } from './planLabel';

export const BILLING_PATH = '/account/subscription';

/** The command an administrator runs on the server to give `email` the plan `plan`. */
export function planCommand(email: string, plan: string): string {
  return `python -m konnectz_api plan set ${email} ${plan}`;
}

/** How the plan changes: the administrator's CLI command and api call. */
export function PlanChangeModal({ plan, open, onClose }: { plan: string; open: boolean; onClose: () => void }) {
  const email = useProfile((s) => s.profile?.email) ?? 'YOUR_EMAIL';
  const command = planCommand(email, plan);
  return (
    <Modal
      open={open}
      onCancel={onClose}
      title={`Change to the ${planLabel(plan)} plan`}
      footer={<Button onClick={onClose}>Close</Button>}
      destroyOnHidden
    >
      <div data-testid="plan-change-modal">
        <Typography.Paragraph>
          This Konnectz has no online payment: plans are given by an administrator of this installation. Ask yours to
          run, on the server:
        </Typography.Paragraph>
        <Typography.Paragraph>
          <code data-testid="plan-change-command">{command}</code> <CopyButton text={command} />
        </Typography.Paragraph>
        <Typography.Paragraph type="secondary">
          An administrator signed in can also call <code>POST /api/v1/admin/users/plan</code> with{' '}
          <code>{`{"email": "${email}", "plan": "${plan}"}`}</code>. The new plan and its task limit apply at once.
        </Typography.Paragraph>
      </div>
    </Modal>
  );
}

/** A button that opens the plan change modal for `plan`. */
export function PlanButton({ plan, label, testId }: { plan: string; label: string; testId?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button type="primary" onClick={() => setOpen(true)} data-testid={testId}>
        {label}
      </Button>
      <PlanChangeModal plan={plan} open={open} onClose={() => setOpen(false)} />
    </>
  );
}

/** The plans as cards, each with its action: the current one says so, the others open the modal. */
export function PlanCards({ current }: { current: string }) {
  const plans = $api.useQuery('get', '/api/v1/plans');
  if (!plans.data) return null;
  return (
    <Row gutter={[16, 16]} data-testid="plan-cards">
      {plans.data.map((p) => (
        <Col xs={24} sm={12} xl={6} key={p.name}>
          <Card title={planLabel(p.name)} data-testid={`plan-card-${p.name}`}>
            <Typography.Title level={4}>{p.price}</Typography.Title>
            <Typography.Paragraph type="secondary">{p.task_limit.toLocaleString('en')} tasks</Typography.Paragraph>
            {p.name === current ? (
              <Button disabled data-testid={`plan-action-${p.name}`}>
                Current Plan
              </Button>
            ) : (
              <PlanButton plan={p.name} label={`Change to ${planLabel(p.name)}`} testId={`plan-action-${p.name}`} />
            )}
          </Card>
        </Col>
      ))}
    </Row>
  );
}

/** The link of a notice (members on an unsupported plan) to the plans. */
export function UpgradeLink() {
  const navigate = useNavigate();
  return (
    <Button type="primary" onClick={() => navigate(BILLING_PATH)} data-testid="upgrade-link">
      See the plans and upgrade
    </Button>
  );
}
