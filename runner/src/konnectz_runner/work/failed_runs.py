"""The ERROR task event of a run the runner could not execute: one step, written by the runner,
that says why (a refused run, a run ended after its deliveries, a run that raised in the worker)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from konnectz_contracts.events import RunRequest, StepResult, TaskEvent

__all__ = ["runner_error_event"]


def runner_error_event(
    run: RunRequest,
    error: str,
    *,
    konnect_id: int,
    owner_id: int,
    konnect_name: str,
    trigger_id: str,
    trigger_output: dict[str, Any],
    step_id: str,
    step_name: str = "Runner",
    app: str = "runner",
    refused: str | None = None,
    attempts: int = 1,
    replay_of: str | None = None,
) -> TaskEvent:
    """An ERROR run from ``run.received_at`` to now whose only step (``step_id``) failed with ``error``."""
    now = datetime.now(UTC)
    step = StepResult(
        step_id=step_id,
        name=step_name,
        app=app,
        status="ERROR",
        started_at=run.received_at,
        finished_at=now,
        input={},
        output=None,
        error=error,
    )
    return TaskEvent(
        run_id=run.run_id,
        konnect_id=konnect_id,
        owner_id=owner_id,
        konnect_name=konnect_name,
        status="ERROR",
        started_at=run.received_at,
        finished_at=now,
        trigger_id=trigger_id,
        trigger_output=trigger_output,
        steps=[step],
        refused=refused,
        attempts=attempts,
        replay_of=replay_of,
    )
