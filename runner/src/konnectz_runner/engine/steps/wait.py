"""Runs the ``wait`` step (wait for a call); its config is :mod:`konnectz_contracts.steps.wait`.

The step itself only says when the wait times out (``Outcome.resume_at``) and what its resume URL is;
the engine suspends the run with a :class:`~konnectz_contracts.events.WaitState` in its continuation
(:func:`wait_state`), the worker stores it in ``KZ_WAITS`` and a timer for the timeout, and whoever
decides the wait (a call, the timeout, a cancel) brings the run back. :func:`apply_decision` then
turns the decision into the step's record and output before the following steps run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from konnectz_contracts.events import Continuation, StepResult, StepWait, WaitState
from konnectz_contracts.model import utcnow
from konnectz_contracts.steps.wait import Config
from konnectz_contracts.waits import WAITING_FOR, resume_url, wait_key
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.approval import TEST_RUN_PREFIX

__all__ = ["WAITING_KINDS", "apply_decision", "links", "record_of", "run", "timed_out_error", "wait_state"]


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def timed_out_error(config_or_until: Any) -> str:
    return f"No call to the resume URL came before the timeout ({_iso(config_or_until)})"


async def run(config: Config, ctx: StepContext) -> Outcome:
    """The resume URL and the timeout; the engine suspends the run until one of them decides."""
    recorded: dict[str, Any] = {"timeout": config.timeout, "timeout_unit": config.timeout_unit}
    recorded["on_timeout"] = config.on_timeout
    if ctx.run_id.startswith(TEST_RUN_PREFIX):  # Test & Review: nothing waits, no link; what a call's run maps
        return Outcome(output={"timed_out": False}, input=recorded)
    url = resume_url(ctx.konnect_id, ctx.run_id, config.id)
    if url is None:
        return Outcome.failed("No key to sign resume URLs with (KONNECTZ_CREDENTIALS_KEY or _TOKEN)", input=recorded)
    now = ctx.now()
    until = now + config.span()
    output = {"resume_url": url, "waiting_since": _iso(now), "timeout_at": _iso(until)}
    return Outcome(output=output, input=recorded, resume_at=until)


def links(steps: list[Any], konnect_id: int, run_id: str) -> dict[str, dict[str, Any]]:
    """``{wait step id: {"resume_url": ...}}`` for every Wait step of the flow: what steps before a wait
    reference (``{{node-3.resume_url}}``)."""
    found: dict[str, dict[str, Any]] = {}
    for step in steps:
        if step.kind == "wait":
            url = resume_url(konnect_id, run_id, step.id)
            if url is not None:
                found[step.id] = {"resume_url": url}
    return found


#: Step kinds that wait for a decision (a call) rather than a time: a Wait for a Call, an Approval, a
#: Call a Flow that waits for the called run.
WAITING_KINDS = frozenset({"wait", "approval", "call_flow"})


def wait_state(step: Any, run_id: str, since: datetime, until: datetime, output: Any = None) -> WaitState | None:
    """The continuation's wait when ``step`` waits for a call (a Wait, an Approval, a Call a Flow; None for
    a delay)."""
    if step.kind not in WAITING_KINDS:
        return None
    if step.kind == "call_flow":
        called = output.get("run_id") if isinstance(output, dict) else None
        name = output.get("flow_name") if isinstance(output, dict) else None
        return WaitState(
            key=wait_key(run_id, step.id),
            since=since,
            until=until,
            on_timeout=step.on_timeout,
            waiting_for=f"the run {called} of the flow {name or step.flow_id}"[:200],
            called_run=called,
        )
    approvers = output.get("approvers") if step.kind == "approval" and isinstance(output, dict) else None
    waiting_for = f"approval by {', '.join(map(str, approvers))}"[:200] if approvers else None
    return WaitState(
        key=wait_key(run_id, step.id), since=since, until=until, on_timeout=step.on_timeout, waiting_for=waiting_for
    )


def _reason(wait: WaitState) -> str:
    by = {"call": "a call", "timeout": "its timeout", "cancel": "a cancel"}[wait.decided or "timeout"]
    if wait.called_run and wait.decided == "call":
        by = "the end of the called run"
    elif wait.waiting_for and wait.decided == "call":
        by = f"the decision of {(wait.body or {}).get('decided_by') or 'an approver'}"
    at = _iso(wait.decided_at or utcnow())
    whom = wait.waiting_for or WAITING_FOR
    return f"Waited for {whom} from {_iso(wait.since)} (timeout {_iso(wait.until)}); resumed by {by} at {at}"


def _called_error(wait: WaitState) -> str:
    return f"The called run {wait.called_run} did not end before the timeout ({_iso(wait.until)})"


def _called(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(output, error) of a Call a Flow step from the called run's result (konnectz_runner.work.subflows)."""
    link = {k: body.get(k) for k in ("run_id", "flow_id", "flow_name")}
    if body.get("status") == "SUCCESS":
        return {"result": body.get("result"), **link, "status": "SUCCESS", "timed_out": False}, None
    why = body.get("error") or "no error was given"
    flow = link["flow_name"] or link["flow_id"]
    return None, f"The called flow {flow} (run {link['run_id']}) ended {body.get('status')}: {why}"


def record_of(wait: WaitState, decided_at: datetime) -> StepWait:
    """The task log's structured record of a decided wait (what ``_reason`` says in words)."""
    decided_by = (wait.body or {}).get("decided_by") if wait.waiting_for and wait.decided == "call" else None
    return StepWait(
        waiting_for=(wait.waiting_for or WAITING_FOR)[:300],
        since=wait.since,
        until=wait.until,
        resumed_by=wait.decided or "timeout",
        resumed_at=decided_at,
        decided_by=str(decided_by)[:320] if decided_by else None,
    )


def apply_decision(resume: Continuation, outputs: dict[str, Any], results: list[StepResult], step: Any = None) -> bool:
    """Write the decided wait into the Wait step's record and output; False when the run ends there
    (a timeout whose policy is ``stop`` or ``fail``, a called run that failed). A cancel changes nothing:
    the run ends CANCELLED. ``step``: the waiting step's config (its On error policy, for a Call a Flow)."""
    wait = resume.wait
    if wait is None or wait.decided is None or wait.decided == "cancel":
        return True
    index = next((i for i in range(len(results) - 1, -1, -1) if results[i].step_id == resume.after_step), None)
    decided_at = wait.decided_at or utcnow()
    update: dict[str, Any] = {
        "finished_at": decided_at,
        "waited_seconds": round((decided_at - wait.since).total_seconds(), 3),
        "wait_reason": _reason(wait),
        "wait": record_of(wait, decided_at),
    }
    go_on = True
    policy = getattr(step, "on_error", None)
    if wait.decided == "call" and wait.called_run:
        output, error = _called(wait.body or {})
        if output is not None:
            update["output"] = output
            outputs[resume.after_step] = output
        elif policy is not None and policy.continue_run:  # the run goes on with the error as the output
            output = {"error": {"message": error, "status": None}}
            update.update(status="ERROR", error=error, output=output, continued=True)
            outputs[resume.after_step] = output
        else:
            update.update(status="ERROR", error=error)
            go_on = False
    elif wait.decided == "call":
        output = {**(wait.body or {}), "timed_out": False}
        update["output"] = output
        outputs[resume.after_step] = output
    elif wait.on_timeout == "continue":
        output = {"timed_out": True}
        update["output"] = output
        outputs[resume.after_step] = output
    elif wait.on_timeout == "stop":
        update["stop"] = _called_error(wait) if wait.called_run else timed_out_error(wait.until)
        go_on = False
    else:
        update.update(status="ERROR", error=_called_error(wait) if wait.called_run else timed_out_error(wait.until))
        go_on = False
    if index is not None:
        results[index] = results[index].model_copy(update=update)
    return go_on
