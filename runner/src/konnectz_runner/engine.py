"""Executes a :class:`~konnectz_runner.spec.FlowSpec` for one :class:`~konnectz_runner.events.RunRequest`.

Steps run in order; each is run by the module of its kind (:mod:`konnectz_runner.steps`). The
context starts as ``{trigger_id: trigger_output}`` and each step's output is added under its
node id, so later steps can reference it. The first failing step marks the run ERROR and stops
it; the result is always one :class:`TaskEvent`. Outbound HTTP rules are in
:mod:`konnectz_runner.outbound`.
"""

from __future__ import annotations

from typing import Any

import httpx

from konnectz_runner.events import RunRequest, StepResult, TaskEvent
from konnectz_runner.model import Outcome, StepContext, utcnow
from konnectz_runner.netguard import NetGuard
from konnectz_runner.spec import FlowSpec
from konnectz_runner.steps import run_step

__all__ = ["execute", "step_result"]


def step_result(step: Any, outcome: Outcome, started: Any) -> StepResult:
    """The task-log record of one step's outcome."""
    output = outcome.output
    if output is not None and not isinstance(output, dict):
        output = {"value": output}
    return StepResult(
        step_id=step.id,
        name=step.name,
        app=step.kind,
        status=outcome.status,
        started_at=started,
        finished_at=utcnow(),
        input=outcome.input,
        output=output,
        error=outcome.error,
    )


async def execute(spec: FlowSpec, run: RunRequest, *, http: httpx.AsyncClient, guard: NetGuard) -> TaskEvent:
    """Run every step of ``spec`` for ``run`` and describe the outcome as one TaskEvent."""
    started = utcnow()
    ctx = StepContext(
        outputs={spec.trigger_id: run.trigger_output},
        http=http,
        guard=guard,
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
    )
    results: list[StepResult] = []
    for step in spec.steps:
        step_started = utcnow()
        outcome = await run_step(step, ctx)
        results.append(step_result(step, outcome, step_started))
        if outcome.status == "ERROR":
            break
        ctx.outputs[step.id] = outcome.output
    return TaskEvent(
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        konnect_name=spec.name,
        status="ERROR" if any(r.status == "ERROR" for r in results) else "SUCCESS",
        started_at=started,
        finished_at=utcnow(),
        trigger_id=spec.trigger_id,
        trigger_output=run.trigger_output,
        steps=results,
    )
