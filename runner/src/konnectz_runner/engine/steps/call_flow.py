"""Runs the ``call_flow`` step; its config is :mod:`konnectz_contracts.steps.call_flow` (docs/sub-flows.md).

The step resolves the inputs' references and has the run's :data:`~konnectz_runner.engine.context.FLOW_CALLS`
start the called run. Going on at once, that is all: the output names the called run. Waiting, the
step returns its timeout as ``resume_at``: the engine suspends the run with a wait (``WaitState.called_run``,
:func:`konnectz_runner.engine.steps.wait.wait_state`), the worker stores it in ``KZ_WAITS``, and whoever
ends the called run decides it with the result (:mod:`konnectz_runner.work.subflows`);
:func:`konnectz_runner.engine.steps.wait.apply_decision` turns it into this step's output or error.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps.call_flow import Config
from konnectz_runner.engine.context import FLOW_CALLS, CallRefused, Outcome, StepContext

__all__ = ["NOT_HERE", "run"]

NOT_HERE = "Call a Flow starts another flow's run only in a published flow's run (not in Test & Review)"


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


async def run(config: Config, ctx: StepContext) -> Outcome:
    arguments: dict[str, Any] = {
        key: resolve_value(value, ctx.outputs, ctx.warnings) for key, value in config.inputs.items()
    }
    recorded: dict[str, Any] = {"flow_id": config.flow_id, "inputs": arguments, "mode": config.mode}
    calls = FLOW_CALLS.get()
    if calls is None:
        return Outcome.failed(NOT_HERE, input=recorded)
    try:
        started = await calls.start(
            config.flow_id, arguments, step_id=config.id, wait=config.waits, item_index=ctx.item_index
        )
    except CallRefused as exc:
        return Outcome.failed(exc.message, input=recorded, failure="connection" if exc.transient else "other")
    if not config.waits:
        return Outcome(output=started, input=recorded)
    now = ctx.now()
    until = now + config.span()
    recorded.update(timeout=config.timeout, timeout_unit=config.timeout_unit, on_timeout=config.on_timeout)
    output = {**started, "waiting_since": _iso(now), "timeout_at": _iso(until)}
    return Outcome(output=output, input=recorded, resume_at=until)
