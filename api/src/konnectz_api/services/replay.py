"""Replaying a failed run: the same accepted request, run again as one new run linked to the first.

The request a run was started with is kept in its task log (``data[trigger_id]``, the trigger's
output) for as long as the task log is kept. A replay stores a new :class:`RunRequest` with a new
``run_id`` and ``replay_of`` = the first run's ``run_id`` in ``KZ_RUNS``, exactly as the webhook
ingress does; its task log carries ``replay_of`` so the history links the two, and the first run's
task log records ``replayed_as``: asking again answers that run instead of starting another (unless a
new replay is asked for explicitly).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from konnectz_api.bus import Bus
from konnectz_api.errors import ApiError
from konnectz_contracts.events import RunRequest
from konnectz_runner.bus import publish_run

__all__ = ["ReplayUnavailable", "replay_run", "replay_run_id"]

_REPLAY_NAMESPACE = uuid.UUID("4b6f6e6e-6563-747a-2072-65706c617973")


def replay_run_id(run_id: str, generation: int) -> str:
    """The run id of the ``generation``-th replay of ``run_id``: derived, never random, so two replays
    asked for at once store one run (JetStream deduplicates by ``Nats-Msg-Id`` = run id) and a replay
    stored again after a crash keeps its id (one task log, its steps journaled)."""
    return uuid.uuid5(_REPLAY_NAMESPACE, f"{run_id}/replay/{generation}").hex


class ReplayUnavailable(ApiError):
    status_code = 503


async def replay_run(bus: Bus, *, konnect_id: int, trigger_output: dict[str, Any], replay_of: str, run_id: str) -> str:
    """Store the replay in JetStream (acknowledged) under ``run_id`` and return it."""
    run = RunRequest(
        run_id=run_id,
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
