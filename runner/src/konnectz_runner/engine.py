"""Executes a :class:`~konnectz_contracts.spec.FlowSpec` for one :class:`~konnectz_contracts.events.RunRequest`.

Steps run in the order of the spec (the api compiles it from the canvas links); each is run by
the module of its kind (:mod:`konnectz_runner.steps`). The context starts as
``{trigger_id: trigger_output}`` and each step's output is added under its node id, so later
steps can reference it. What a step's :class:`~konnectz_runner.model.Outcome` decides:

- ``status == "ERROR"``: the run stops and is ERROR.
- ``stop`` (a filter that did not pass): the run stops there and stays SUCCESS; the step's
  record carries the reason.
- ``items`` (the iterator): the following steps run once per item, the item being the iterator's
  output for that pass; each of their records carries ``item_index``. A filter after the
  iterator stops only its item; an error stops the whole run.
- ``resume_at`` (a delay): the run suspends. :func:`execute` returns :class:`Suspended` with a
  :class:`~konnectz_contracts.events.Continuation` (the step to resume after, the outputs and step
  records so far). The worker stores it as a JetStream scheduled message (:mod:`konnectz_runner.timers`);
  when it fires, the same run (same ``run_id``) comes back with ``run.resume`` set and
  :func:`execute` runs only the steps after the delay, ending in the run's one TaskEvent.
  A delay after the iterator is refused when the spec is validated (one pass per item would
  suspend many times; :data:`konnectz_contracts.spec.DELAY_AFTER_ITERATOR`).

A finished run is always one :class:`TaskEvent`. Outbound HTTP rules are in :mod:`konnectz_runner.outbound`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx

from konnectz_contracts.events import Continuation, RunRequest, StepResult, TaskEvent
from konnectz_contracts.model import utcnow
from konnectz_contracts.spec import FlowSpec
from konnectz_runner import telemetry
from konnectz_runner.budgets import Budgets
from konnectz_runner.journal import StepJournal
from konnectz_runner.model import Outcome, StepContext
from konnectz_runner.netguard import NetGuard
from konnectz_runner.steps import run_step

__all__ = ["Suspended", "execute", "step_result", "suspension_failed"]


def step_result(step: Any, outcome: Outcome, started: datetime, item_index: int | None = None) -> StepResult:
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
        item_index=item_index,
        stop=outcome.stop,
        waited_seconds=outcome.waited_seconds,
        wait_reason=outcome.wait_reason,
    )


@dataclasses.dataclass(frozen=True)
class Suspended:
    """A run waiting for ``resume_at``; ``continuation`` is what it needs to go on."""

    resume_at: datetime
    continuation: Continuation


def _event(spec: FlowSpec, run: RunRequest, started: datetime, results: list[StepResult]) -> TaskEvent:
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


def _gone(resume: Continuation) -> StepResult:
    now = utcnow()
    return StepResult(
        step_id=resume.after_step,
        name="Resume",
        app="delay",
        status="ERROR",
        started_at=now,
        finished_at=now,
        input={},
        output=None,
        error=f"The konnect changed while this run waited: step {resume.after_step} is no longer in it",
    )


async def _run(
    step: Any, ctx: StepContext, results: list[StepResult], item_index: int | None, journal: StepJournal | None
) -> Outcome:
    journaled = journal is not None and journal.journaled(step.kind)
    recalled = await journal.recall(step.id, item_index) if journal is not None and journaled else None
    if recalled is not None:  # finished in an earlier delivery, or in doubt: not run again
        earlier, outcome = recalled
        result = earlier if earlier is not None else step_result(step, outcome, utcnow(), item_index)
    else:
        started = utcnow()
        if journal is not None and journaled and journal.marked(step.kind):
            await journal.begin(step.id, item_index)
        clock = time.perf_counter()
        with telemetry.span(f"step {step.kind}", {"konnectz.step_id": step.id}):
            outcome = await run_step(step, ctx)
        telemetry.STEP_SECONDS.labels(step.kind).observe(time.perf_counter() - clock)
        result = step_result(step, outcome, started, item_index)
        if journal is not None and journaled:
            await journal.record(result, outcome.output, outcome.resume_at)
    results.append(result)
    if outcome.status == "SUCCESS":
        ctx.outputs[step.id] = outcome.output
    return outcome


async def _each_item(
    iterator: Any,
    items: list[Any],
    steps: Sequence[Any],
    ctx: StepContext,
    results: list[StepResult],
    journal: StepJournal | None,
) -> None:
    """Run ``steps`` once per item; the first ERROR ends everything, a filter stop ends its item."""
    for index, item in enumerate(items):
        item_ctx = dataclasses.replace(ctx, outputs={**ctx.outputs, iterator.id: item})
        for step in steps:
            outcome = await _run(step, item_ctx, results, index, journal)
            if outcome.status == "ERROR":
                return
            if outcome.stop is not None:
                break


async def execute(
    spec: FlowSpec,
    run: RunRequest,
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    journal: StepJournal | None = None,
    budgets: Budgets | None = None,
) -> TaskEvent | Suspended:
    """Run the steps of ``spec`` for ``run`` (after ``run.resume.after_step`` when it resumes).

    Returns the run's one TaskEvent, or :class:`Suspended` when a step asks to wait. With a
    ``journal`` (:mod:`konnectz_runner.journal`), each finished step with effects is recorded, and
    on a redelivery a recorded step is not executed again.
    """
    resume = run.resume
    started = resume.started_at if resume else utcnow()
    outputs = dict(resume.outputs) if resume else {spec.trigger_id: run.trigger_output}
    results: list[StepResult] = list(resume.steps) if resume else []
    steps: list[Any] = list(spec.steps)
    if resume is not None:
        ids = [step.id for step in steps]
        if resume.after_step not in ids:
            return _event(spec, run, started, [*results, _gone(resume)])
        steps = steps[ids.index(resume.after_step) + 1 :]
    ctx = StepContext(
        outputs=outputs,
        http=http,
        guard=guard,
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        timezone=spec.timezone,
        budgets=budgets,
    )
    for position, step in enumerate(steps):
        outcome = await _run(step, ctx, results, None, journal)
        if outcome.status == "ERROR" or outcome.stop is not None:
            break
        if outcome.items is not None:
            await _each_item(step, outcome.items, steps[position + 1 :], ctx, results, journal)
            break
        if outcome.resume_at is not None:
            continuation = Continuation(
                after_step=step.id,
                resume_at=outcome.resume_at,
                started_at=started,
                outputs=ctx.outputs,
                steps=results,
            )
            return Suspended(outcome.resume_at, continuation)
    return _event(spec, run, started, results)


def suspension_failed(spec: FlowSpec, run: RunRequest, suspended: Suspended, error: str) -> TaskEvent:
    """The TaskEvent of a run that could not be suspended: its delay step becomes an ERROR."""
    results = list(suspended.continuation.steps)
    last = results[-1]
    results[-1] = last.model_copy(update={"status": "ERROR", "error": error})
    return _event(spec, run, suspended.continuation.started_at, results)
