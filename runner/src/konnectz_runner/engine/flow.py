"""Executes a :class:`~konnectz_contracts.spec.FlowSpec` for one :class:`~konnectz_contracts.events.RunRequest`.

Steps run in the order of the spec (the api compiles it from the canvas links); each is run by
the module of its kind (:mod:`konnectz_runner.engine.steps`). The context starts as
``{trigger_id: trigger_output}`` and each step's output is added under its node id, so later
steps can reference it. What a step's :class:`~konnectz_runner.engine.context.Outcome` decides:

- ``status == "ERROR"``: the run stops and is ERROR.
- ``stop`` (a filter that did not pass): the run stops there and stays SUCCESS; the step's
  record carries the reason.
- ``items`` (the iterator): the following steps run once per item, the item being the iterator's
  output for that pass; each of their records carries ``item_index``. A filter after the
  iterator stops only its item; an error stops the whole run.
- ``resume_at`` (a delay): the run suspends. :func:`execute` returns :class:`Suspended` with a
  :class:`~konnectz_contracts.events.Continuation` (the step to resume after, the outputs and step
  records so far). The worker stores it as a JetStream scheduled message (:mod:`konnectz_runner.bus.timers`);
  when it fires, the same run (same ``run_id``) comes back with ``run.resume`` set and
  :func:`execute` runs only the steps after the delay, ending in the run's one TaskEvent.
  A delay after the iterator is refused when the spec is validated (one pass per item would
  suspend many times; :data:`konnectz_contracts.spec.DELAY_AFTER_ITERATOR`).
- a router (:func:`_paths`): its output names the chosen paths; they run concurrently (asyncio
  tasks), each with its own copy of the outputs so far, and each of their records carries
  ``path = "<router id>/<path name>"``. The steps of the paths not chosen are recorded SKIPPED. A
  filter on a path stops that path; an ERROR on a path ends the run as ERROR once the other paths
  finished their current step. The outputs of every path step are then added to the context, and
  the join (if any) merges the paths' last outputs under the path names and decides, by its
  ``wait`` (all / any), whether the run goes on. No path chosen stops the run at the router.

Run control (:mod:`konnectz_contracts.run_control`, :mod:`konnectz_runner.bus.active`):

- Cancel: with a ``watch`` (:class:`RunWatch`), the engine asks it before the run (also a resumed
  one) and before each step whether the run was cancelled; if so the run ends at once as a
  CANCELLED TaskEvent naming who cancelled it, with the steps that ran so far. A step that is
  running is not interrupted by a cancel (it ends, or meets the deadline).
- Deadline (``spec.run_control.deadline_seconds``, measured from the run's start; time waiting in
  a delay counts): each step runs under a timeout of the time left; a step still going when it
  runs out is interrupted and ends as an ERROR saying :func:`deadline_error`. A step that would
  start after it is not run (ERROR on it). A delay that would end after the deadline is cut to
  the deadline: the run comes back then and ends as an ERROR on the delay step.

A finished run is always one :class:`TaskEvent`. Outbound HTTP rules are in :mod:`konnectz_runner.apps.outbound`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

import httpx

from konnectz_contracts.events import Attempt, Continuation, RunRequest, StepResult, TaskEvent
from konnectz_contracts.model import utcnow
from konnectz_contracts.on_error import retry_delay
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.steps.router import path_label
from konnectz_runner import telemetry
from konnectz_runner.apps import Budgets, NetGuard
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.journal import StepJournal
from konnectz_runner.engine.steps import run_step
from konnectz_runner.engine.steps import wait as waits

__all__ = ["RunWatch", "Suspended", "deadline_error", "execute", "step_result", "suspension_failed"]


class RunWatch(Protocol):
    """What the engine asks while a run goes (the worker's :class:`konnectz_runner.bus.active.ActiveWatch`)."""

    async def cancelled(self) -> str | None:
        """Who cancelled the run (an e-mail), or None to go on."""

    async def at_step(self, step_id: str) -> None:
        """The run starts step ``step_id`` (to show it in the active runs)."""


def deadline_error(seconds: int) -> str:
    return f"Stopped: the run passed its deadline of {seconds} s"


class _Cancelled(Exception):
    def __init__(self, by: str) -> None:
        super().__init__(by)
        self.by = by
        # cancelled while a step waited to retry: that step's last outcome and failed attempts
        self.retrying: tuple[Outcome, list[Attempt]] | None = None


@dataclasses.dataclass(frozen=True)
class _Control:
    watch: RunWatch | None = None
    deadline: datetime | None = None
    seconds: int = 0
    # Why a step is not run (None: run it): an evaluation that stops before steps with effects.
    hold: Callable[[Any], str | None] | None = None

    async def check(self) -> None:
        if self.watch is not None:
            by = await self.watch.cancelled()
            if by is not None:
                raise _Cancelled(by)

    def passed(self) -> bool:
        return self.deadline is not None and utcnow() >= self.deadline


def step_result(
    step: Any,
    outcome: Outcome,
    started: datetime,
    item_index: int | None = None,
    path: str | None = None,
    retries: list[Attempt] | None = None,
) -> StepResult:
    """The task-log record of one step's outcome (``path``: the router path it ran on; ``retries``: the
    attempts that failed before it)."""
    output = outcome.output
    if output is not None and not isinstance(output, dict):
        output = {"value": output}
    return StepResult(
        retries=retries or None,
        continued=True if outcome.continued else None,
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
        path=path,
        waited_seconds=outcome.waited_seconds,
        wait_reason=outcome.wait_reason,
    )


@dataclasses.dataclass(frozen=True)
class Suspended:
    """A run waiting for ``resume_at``; ``continuation`` is what it needs to go on."""

    resume_at: datetime
    continuation: Continuation


def _event(
    spec: FlowSpec, run: RunRequest, started: datetime, results: list[StepResult], cancelled_by: str | None = None
) -> TaskEvent:
    if cancelled_by is not None:
        return TaskEvent(
            run_id=run.run_id,
            konnect_id=spec.konnect_id,
            owner_id=spec.owner_id,
            konnect_name=spec.name,
            status="CANCELLED",
            started_at=started,
            finished_at=utcnow(),
            trigger_id=spec.trigger_id,
            trigger_output=run.trigger_output,
            steps=results,
            cancelled_by=cancelled_by,
        )
    return TaskEvent(
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        konnect_name=spec.name,
        status="ERROR" if any(r.status == "ERROR" and not r.continued for r in results) else "SUCCESS",
        started_at=started,
        finished_at=utcnow(),
        trigger_id=spec.trigger_id,
        trigger_output=run.trigger_output,
        steps=results,
        revision=spec.revision,
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


async def _run_step(step: Any, ctx: StepContext, control: _Control) -> Outcome:
    """The step, under the run's deadline (interrupted when the time left runs out)."""
    if control.deadline is None:
        return await run_step(step, ctx)
    left = (control.deadline - utcnow()).total_seconds()
    if left <= 0:
        return Outcome.failed(deadline_error(control.seconds))
    scope = asyncio.timeout(left)
    try:
        async with scope:
            return await run_step(step, ctx)
    except TimeoutError:
        # Whether the deadline's own timeout fired, not whether the wall clock has passed the deadline:
        # the timeout runs on the loop's monotonic clock, and a moment before the wall clock agreed the
        # step was taken for a NATS outage and the run redelivered (in doubt) instead of failing here.
        if not scope.expired():  # the step's own timeout, not the deadline
            raise
        return Outcome.failed(deadline_error(control.seconds))


#: While a step waits to retry, the run's cancel request is looked at this often.
RETRY_CANCEL_CHECK_SECONDS = 1.0


def idempotency_key(run_id: str, step_id: str, item_index: int | None) -> str:
    """The ``Idempotency-Key`` every attempt of one step of one run sends (after an iterator, of one item)."""
    raw = f"{run_id}\x00{step_id}\x00{'' if item_index is None else item_index}"
    return "kz-" + hashlib.sha256(raw.encode()).hexdigest()[:40]


async def _attempts(
    step: Any, ctx: StepContext, control: _Control, item_index: int | None
) -> tuple[Outcome, list[Attempt]]:
    """Run the step, and again as its retry policy (``on_error.retry``) says: the last outcome and the
    attempts that failed before it. A retry waits inside the run, never past its deadline; a cancel
    stops the waiting (:class:`_Cancelled` carries what the step did so far)."""
    policy = getattr(step, "on_error", None)
    retry = policy.retry if policy is not None else None
    if retry is None:
        return await _run_step(step, ctx, control), []
    ctx = dataclasses.replace(ctx, idempotency_key=idempotency_key(ctx.run_id, step.id, item_index))
    retries: list[Attempt] = []
    while True:
        started = utcnow()
        outcome = await _run_step(step, ctx, control)
        if outcome.status != "ERROR" or len(retries) >= retry.attempts or outcome.failure not in retry.on:
            return outcome, retries
        if outcome.error == deadline_error(control.seconds):
            return outcome, retries
        asked = outcome.retry_after  # a 429's, or a 503's (RFC 9110 allows both)
        delay = retry_delay(retry, len(retries) + 1, asked)
        if delay is None:  # a Retry-After longer than any retry may wait
            outcome.error = f"{outcome.error} (Retry-After {asked:.0f} s is longer than a retry waits)"
            return outcome, retries
        if control.deadline is not None and utcnow() + timedelta(seconds=delay) >= control.deadline:
            outcome.error = f"{outcome.error} (not retried: the run's deadline comes first)"
            return outcome, retries
        retries.append(
            Attempt(
                number=len(retries) + 1,
                started_at=started,
                finished_at=utcnow(),
                error=outcome.error or "",
                failure=outcome.failure or "other",
                status=outcome.status_code,
                waited_seconds=round(delay, 3),
            )
        )
        telemetry.STEP_RETRIES.labels(step.kind, outcome.failure or "other").inc()
        waited = 0.0
        while waited < delay:
            chunk = min(RETRY_CANCEL_CHECK_SECONDS, delay - waited)
            await asyncio.sleep(chunk)
            waited += chunk
            try:
                await control.check()
            except _Cancelled as cancelled:
                cancelled.retrying = (outcome, retries)
                raise


def _continued(step: Any, outcome: Outcome) -> Outcome:
    """A failed step whose policy says ``continue_run``: the run goes on, the step's output is its error."""
    policy = getattr(step, "on_error", None)
    if outcome.status != "ERROR" or policy is None or not policy.continue_run:
        return outcome
    return dataclasses.replace(
        outcome,
        output={"error": {"message": outcome.error, "status": outcome.status_code}},
        continued=True,
    )


async def _run(
    step: Any,
    ctx: StepContext,
    results: list[StepResult],
    item_index: int | None,
    journal: StepJournal | None,
    control: _Control,
    path: str | None = None,
) -> Outcome:
    await control.check()
    held = control.hold(step) if control.hold is not None else None
    if held is not None:  # recorded SKIPPED; like a filter's stop, it ends its run, path or item
        results.append(_skipped(step, path, held, item_index))
        return Outcome(stop=held)
    if control.watch is not None:
        await control.watch.at_step(step.id)
    journaled = journal is not None and journal.journaled(step.kind)
    recalled = await journal.recall(step.id, item_index) if journal is not None and journaled else None
    if recalled is not None:  # finished in an earlier delivery, or in doubt: not run again
        earlier, outcome = recalled
        result = earlier if earlier is not None else step_result(step, outcome, utcnow(), item_index, path)
    else:
        started = utcnow()
        if journal is not None and journaled and journal.marked(step.kind):
            await journal.begin(step.id, item_index)
        clock = time.perf_counter()
        step_ctx = ctx
        if journal is not None and journaled:  # its parts (an Agent's tool calls) are journaled too
            step_ctx = dataclasses.replace(ctx, substeps=journal.substeps(step.id, item_index), item_index=item_index)
        elif item_index is not None:
            step_ctx = dataclasses.replace(ctx, item_index=item_index)
        try:
            with telemetry.span(f"step {step.kind}", {"konnectz.step_id": step.id}):
                outcome, retries = await _attempts(step, step_ctx, control, item_index)
        except _Cancelled as cancelled:  # while it waited to retry: its attempts so far are in the log
            if cancelled.retrying is not None:
                last, retries = cancelled.retrying
                results.append(step_result(step, last, started, item_index, path, retries))
            raise
        telemetry.STEP_SECONDS.labels(step.kind).observe(time.perf_counter() - clock)
        outcome = _continued(step, outcome)
        result = step_result(step, outcome, started, item_index, path, retries)
        if journal is not None and journaled:
            await journal.record(result, outcome.output, outcome.resume_at)
    results.append(result)
    if outcome.continued:  # the run goes on; later steps see the error as the step's output
        outcome = dataclasses.replace(outcome, status="SUCCESS", error=None)
    if outcome.status == "SUCCESS":
        ctx.outputs[step.id] = outcome.output
    return outcome


def _skipped(step: Any, path: str | None, why: str, item_index: int | None) -> StepResult:
    now = utcnow()
    return StepResult(
        step_id=step.id,
        name=step.name,
        app=step.kind,
        status="SKIPPED",
        started_at=now,
        finished_at=now,
        input={},
        output=None,
        item_index=item_index,
        stop=why,
        path=path,
    )


def _why_not(router: Any, name: str, chosen: list[str], records: dict[str, Any]) -> str:
    """Why path ``name`` was not chosen, for its skipped steps."""
    record = records.get(name, {})
    if not chosen:
        return f"Path {name}: its conditions did not pass (no path was chosen)"
    if record.get("otherwise"):
        return f"Path {name}: the otherwise path runs only when no other path's conditions pass"
    if record.get("passed") and router.mode == "first_match":
        return f"Path {name}: its conditions passed, but first match ran path {chosen[0]}"
    return f"Path {name}: its conditions did not pass"


@dataclasses.dataclass
class _PathRun:
    """How one chosen path ended: ``reached`` the join, ``stopped`` by a filter, ``error``, or
    ``halted`` (another path failed first)."""

    end: str = "reached"
    reason: str | None = None
    results: list[StepResult] = dataclasses.field(default_factory=list)
    outputs: dict[str, Any] = dataclasses.field(default_factory=dict)


async def _paths(
    steps: Sequence[Any],
    position: int,
    ctx: StepContext,
    results: list[StepResult],
    item_index: int | None,
    journal: StepJournal | None,
    control: _Control,
) -> tuple[Outcome, int]:
    """Run the router at ``steps[position]``, its chosen paths concurrently, and its join.

    Returns the outcome of the whole block (ERROR, a stop, or success) and the position after it.
    """
    router = steps[position]
    by_id = {step.id: step for step in steps}
    end = position + 1 + sum(len(path.steps) for path in router.paths)
    join = steps[end] if end < len(steps) and steps[end].kind == "join" and steps[end].router == router.id else None
    after = end + 1 if join is not None else end
    outcome = await _run(router, ctx, results, item_index, journal, control)
    if outcome.status == "ERROR":
        return outcome, after
    output = outcome.output if isinstance(outcome.output, dict) else {}
    chosen = [name for name in output.get("paths") or () if isinstance(name, str)]
    records = {str(r.get("name")): r for r in outcome.input.get("paths") or () if isinstance(r, dict)}
    failed = asyncio.Event()

    async def one(path: Any) -> _PathRun:
        label = path_label(router.id, path.name)
        state = _PathRun()
        path_ctx = dataclasses.replace(ctx, outputs=dict(ctx.outputs))
        for step_id in path.steps:
            if failed.is_set():
                state.end, state.reason = "halted", "another path failed"
                break
            step_outcome = await _run(by_id[step_id], path_ctx, state.results, item_index, journal, control, label)
            if step_outcome.status == "ERROR":
                failed.set()
                state.end, state.reason = "error", step_outcome.error
                break
            if step_outcome.stop is not None:
                state.end, state.reason = "stopped", step_outcome.stop
                break
        state.outputs = {sid: path_ctx.outputs[sid] for sid in path.steps if sid in path_ctx.outputs}
        return state

    running = [path for path in router.paths if path.name in chosen]
    # Every path finishes (or stops) before anything propagates: an exception in one path (the
    # journal's StepBusy, a bug) is raised once the others are done, never leaving them running.
    finished = await asyncio.gather(*(one(p) for p in running), return_exceptions=True)
    raised = next((f for f in finished if isinstance(f, BaseException)), None)
    if raised is not None:
        raise raised
    ran = {p.name: state for p, state in zip(running, finished, strict=True) if isinstance(state, _PathRun)}
    for path in router.paths:
        state = ran.get(path.name)
        if state is None:
            why = _why_not(router, path.name, chosen, records)
            label = path_label(router.id, path.name)
            results.extend(_skipped(by_id[sid], label, why, item_index) for sid in path.steps)
        else:
            results.extend(state.results)
            ctx.outputs.update(state.outputs)
    if outcome.stop is not None:  # no path chosen: the run stops at the router
        return outcome, after
    if any(state.end == "error" for state in ran.values()):
        return Outcome.failed("A path failed"), after
    if join is None:  # a router without a join: its paths end the run
        return Outcome(), after
    merged: dict[str, Any] = {}
    for path in router.paths:
        state = ran.get(path.name)
        reached = state is not None and state.end == "reached"
        merged[path.name] = (ctx.outputs.get(path.steps[-1]) if path.steps else {}) if reached else None
    stopped = [(name, state) for name, state in ran.items() if state.end != "reached"]
    reason: str | None = None
    if join.wait == "all" and stopped:
        reason = "; ".join(f"Path {name} did not reach the join: {state.reason}" for name, state in stopped)
    elif join.wait == "any" and len(stopped) == len(ran):
        reason = "No path reached the join: " + "; ".join(f"path {name}: {state.reason}" for name, state in stopped)
    joined = await _run(join, dataclasses.replace(ctx, path_results=merged), results, item_index, journal, control)
    if reason is not None and joined.status == "SUCCESS":
        results[-1] = results[-1].model_copy(update={"stop": reason})
        joined.stop = reason
    return joined, after


async def _each_item(
    iterator: Any,
    items: list[Any],
    steps: Sequence[Any],
    ctx: StepContext,
    results: list[StepResult],
    journal: StepJournal | None,
    control: _Control,
) -> None:
    """Run ``steps`` once per item; the first ERROR ends everything, a filter stop ends its item."""
    for index, item in enumerate(items):
        item_ctx = dataclasses.replace(ctx, outputs={**ctx.outputs, iterator.id: item}, item_index=index)
        position = 0
        while position < len(steps):
            if steps[position].kind == "router":
                outcome, position = await _paths(steps, position, item_ctx, results, index, journal, control)
            else:
                outcome = await _run(steps[position], item_ctx, results, index, journal, control)
                position += 1
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
    watch: RunWatch | None = None,
    budgets: Budgets | None = None,
    hold: Callable[[Any], str | None] | None = None,
) -> TaskEvent | Suspended:
    """Run the steps of ``spec`` for ``run`` (after ``run.resume.after_step`` when it resumes).

    Returns the run's one TaskEvent, or :class:`Suspended` when a step asks to wait. With a
    ``journal`` (:mod:`konnectz_runner.engine.journal`), each finished step with effects is recorded, and
    on a redelivery a recorded step is not executed again. With a ``watch``, a cancelled run ends
    as CANCELLED before its next step; ``spec.run_control.deadline_seconds`` bounds the run. ``hold``
    (the api's evaluations) says why a step is not run (None: run it): the step is recorded SKIPPED
    with that reason and, like a filter that did not pass, ends its run (or path, or item) there.
    """
    resume = run.resume
    started = resume.started_at if resume else utcnow()
    outputs = dict(resume.outputs) if resume else {spec.trigger_id: run.trigger_output}
    results: list[StepResult] = list(resume.steps) if resume else []
    steps: list[Any] = list(spec.steps)
    if resume is None:  # the Wait steps' resume URLs, for the steps before them (docs/waits.md)
        outputs.update(waits.links(steps, spec.konnect_id, run.run_id))
    if resume is not None:
        ids = [step.id for step in steps]
        if resume.after_step not in ids:
            return _event(spec, run, started, [*results, _gone(resume)])
        waited = steps[ids.index(resume.after_step)]
        steps = steps[ids.index(resume.after_step) + 1 :]
        if not waits.apply_decision(resume, outputs, results, waited):  # a wait's end that stops the run
            return _event(spec, run, started, results)
    seconds = spec.run_control.deadline_seconds if spec.run_control is not None else None
    control = _Control(
        watch=watch,
        deadline=started + timedelta(seconds=seconds) if seconds else None,
        seconds=seconds or 0,
        hold=hold,
    )
    try:
        return await _steps(spec, run, steps, started, outputs, results, http, guard, journal, control, budgets)
    except _Cancelled as cancelled:
        return _event(spec, run, started, results, cancelled_by=cancelled.by)


async def _steps(
    spec: FlowSpec,
    run: RunRequest,
    steps: list[Any],
    started: datetime,
    outputs: dict[str, Any],
    results: list[StepResult],
    http: httpx.AsyncClient,
    guard: NetGuard,
    journal: StepJournal | None,
    control: _Control,
    budgets: Budgets | None,
) -> TaskEvent | Suspended:
    resume = run.resume
    await control.check()  # also a queued run that never started, and a resumed one
    if resume is not None and control.passed():  # the deadline passed while it waited in the delay
        _stopped_in_delay(results, resume.after_step, control.seconds)
        return _event(spec, run, started, results)
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
    position = 0
    while position < len(steps):
        step = steps[position]
        if step.kind == "router":
            outcome, position = await _paths(steps, position, ctx, results, None, journal, control)
            if outcome.status == "ERROR" or outcome.stop is not None:
                break
            continue
        position += 1
        outcome = await _run(step, ctx, results, None, journal, control)
        if outcome.status == "ERROR" or outcome.stop is not None:
            break
        if outcome.items is not None:
            await _each_item(step, outcome.items, steps[position:], ctx, results, journal, control)
            break
        if outcome.resume_at is not None:
            # A delay past the deadline: the run comes back at the deadline, to end there.
            due = outcome.resume_at
            if control.deadline is not None and due > control.deadline:
                due = control.deadline
            continuation = Continuation(
                after_step=step.id,
                resume_at=due,
                started_at=started,
                outputs=ctx.outputs,
                steps=results,
                revision=spec.revision,
                wait=waits.wait_state(step, run.run_id, utcnow(), due, outcome.output),
            )
            return Suspended(due, continuation)
    return _event(spec, run, started, results)


def _stopped_in_delay(results: list[StepResult], delay_id: str, seconds: int) -> None:
    """The delay step's record becomes the ERROR of the deadline (the run stopped while waiting in it)."""
    for index in range(len(results) - 1, -1, -1):
        if results[index].step_id == delay_id:
            results[index] = results[index].model_copy(
                update={"status": "ERROR", "error": deadline_error(seconds), "finished_at": utcnow()}
            )
            return


def suspension_failed(spec: FlowSpec, run: RunRequest, suspended: Suspended, error: str) -> TaskEvent:
    """The TaskEvent of a run that could not be suspended: its delay step becomes an ERROR."""
    results = list(suspended.continuation.steps)
    last = results[-1]
    results[-1] = last.model_copy(update={"status": "ERROR", "error": error})
    return _event(spec, run, suspended.continuation.started_at, results)
