"""Runs that can be seen and stopped: a konnect's active runs (``KZ_ACTIVE``) and cancelling one.

The runner keeps one ``KZ_ACTIVE`` entry per queued, running or waiting run
(:mod:`konnectz_runner.bus.active`); cancelling stores a :class:`CancelRequest` in ``KZ_CANCELS``, which
the runner reads at the run's next step boundary. A run waiting in a delay is woken at once (its
timer is deleted and its run published now), so it ends as CANCELLED now, not when its delay ends.
"""

from __future__ import annotations

from datetime import UTC, datetime

from konnectz_api.bus import Bus
from konnectz_api.errors import ApiError
from konnectz_contracts.run_control import ActiveRun, CancelRequest
from konnectz_runner.bus import LIST_LIMIT, get_active, list_active, request_cancel, run_state_buckets, wake_waiting

__all__ = ["LIST_LIMIT", "RunControlUnavailable", "active_runs", "cancel_run"]


class RunControlUnavailable(ApiError):
    status_code = 503


def _unavailable(exc: BaseException) -> RunControlUnavailable:
    return RunControlUnavailable(f"The runs could not be read from NATS, try again: {exc or type(exc).__name__}")


async def active_runs(bus: Bus, *, owner_id: int, konnect_id: int) -> list[ActiveRun]:
    try:
        active, _cancels = await run_state_buckets(bus.js)
        return await list_active(active, owner_id, konnect_id)
    except Exception as exc:
        raise _unavailable(exc) from exc


async def cancel_run(bus: Bus, *, owner_id: int, konnect_id: int, run_id: str, by: str) -> ActiveRun | None:
    """Ask the runner to stop the active run ``run_id``; None when it is not active (finished, or unknown)."""
    try:
        active, cancels = await run_state_buckets(bus.js)
        entry = await get_active(active, owner_id, konnect_id, run_id)
        if entry is None:
            return None
        await request_cancel(cancels, CancelRequest(run_id=run_id, by=by, at=datetime.now(UTC)))
        if entry.status == "WAITING":
            await wake_waiting(bus.js, entry)
    except Exception as exc:
        raise _unavailable(exc) from exc
    return entry
