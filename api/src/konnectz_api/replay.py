"""Replaying a failed run: the same accepted request, run again as one new run linked to the first.

The request a run was started with is kept in its task log (``data[trigger_id]``, the trigger's
output) for as long as the task log is kept. A replay stores a new :class:`RunRequest` with a new
``run_id`` and ``replay_of`` = the first run's ``run_id`` in ``KZ_RUNS``, exactly as the webhook
ingress does; its task log carries ``replay_of`` so the history links the two.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from konnectz_api.bus import Bus
from konnectz_api.errors import ApiError
from konnectz_runner.events import RunRequest, publish_run

__all__ = ["ReplayUnavailable", "replay_run"]


class ReplayUnavailable(ApiError):
    status_code = 503


async def replay_run(bus: Bus, *, konnect_id: int, trigger_output: dict[str, Any], replay_of: str) -> str:
    """Store the replay in JetStream (acknowledged) and return its run_id."""
    run = RunRequest(
        run_id=uuid.uuid4().hex,
        konnect_id=konnect_id,
        trigger_output=trigger_output,
        received_at=datetime.now(UTC),
        source="webhook",
        replay_of=replay_of,
    )
    try:
        await publish_run(bus.js, run)
    except Exception as exc:
        raise ReplayUnavailable(f"The replay could not be stored, try again: {exc or type(exc).__name__}") from exc
    return run.run_id
