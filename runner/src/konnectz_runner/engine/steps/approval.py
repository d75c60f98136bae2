"""Runs the ``approval`` step; its config is :mod:`konnectz_contracts.steps.approval`.

It asks the api to record the approval and e-mail the Approve/Reject links
(:func:`konnectz_runner.apps.request_approval`), then waits exactly as a Wait for a Call does
(:mod:`konnectz_runner.engine.steps.wait`): the engine suspends the run with a wait in its
continuation, and the api's link decides it (a call whose body is the decision).
"""

from __future__ import annotations

from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.approval import MAX_APPROVERS, Config, split_approvers
from konnectz_runner.apps import request_approval
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["TEST_RUN_PREFIX", "run"]

#: The run ids of Test & Review (the api's review service): no run waits, so no approval is asked.
TEST_RUN_PREFIX = "test-"


def _iso(value: Any) -> str:
    return str(value.isoformat()).replace("+00:00", "Z")


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    approvers = split_approvers(resolve(config.approvers, ctx.outputs, warnings))
    message = resolve(config.message, ctx.outputs, warnings)
    recorded: dict[str, Any] = {"approvers": approvers, "message": message, "timeout": config.timeout}
    recorded.update(timeout_unit=config.timeout_unit, on_timeout=config.on_timeout)
    if warnings:
        recorded["warnings"] = warnings
    if not approvers:
        return Outcome.failed("No approver: the approvers field resolved to no e-mail address", input=recorded)
    if len(approvers) > MAX_APPROVERS:
        return Outcome.failed(f"At most {MAX_APPROVERS} approvers", input=recorded)
    now = ctx.now()
    until = now + config.span()
    if ctx.run_id.startswith(TEST_RUN_PREFIX):  # Test & Review: nobody is mailed; a sample decision to map
        sample = {"decision": "approved", "approved": True, "decided_by": approvers[0], "timed_out": False}
        return Outcome(output=sample, input=recorded)
    try:
        answer = await request_approval(
            konnect_id=ctx.konnect_id,
            run_id=ctx.run_id,
            step_id=config.id,
            approvers=approvers,
            message=message,
            until=until,
        )
    except StepError as exc:
        return Outcome.from_error(exc, input=recorded)
    output = {
        "status": "pending",
        "approvers": answer.get("approvers", approvers),
        "waiting_since": _iso(now),
        "timeout_at": _iso(until),
    }
    return Outcome(output=output, input=recorded, resume_at=until)
