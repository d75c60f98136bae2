"""Stopping asyncio tasks for sure.

Python 3.11's :func:`asyncio.wait_for` loses a cancellation that arrives in the same loop iteration as
the awaited future's result (CPython gh-86296, fixed in 3.12): it returns the result instead of raising
``CancelledError``. nats-py awaits every request's reply with ``wait_for``, so a background loop that
polls NATS (the queue depth every 0.25 s, an election's renewals) and is cancelled just as a reply comes
in goes on for ever, and ``task.cancel(); await task`` waits for ever: the runner's intermittent hang on
SIGTERM (its lifespan never completed; both event loops idle). :func:`stop_tasks` cancels again while a
task goes on, within a bound, and says which did not stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["AGAIN_SECONDS", "stop_task", "stop_tasks"]

log = logging.getLogger(__name__)

#: A task still running this long after its cancellation is cancelled again (its cleanup, after a
#: ``CancelledError`` it did receive, is short everywhere in the runner: closing a subscription, a KV delete).
AGAIN_SECONDS = 2.0


async def stop_tasks(tasks: Iterable[asyncio.Task[Any] | None], *, bound: float = 30.0) -> set[asyncio.Task[Any]]:
    """Cancel ``tasks`` and wait until they end, cancelling again every :data:`AGAIN_SECONDS` a task goes
    on, at most ``bound`` seconds in all; returns the tasks that had not ended then (logged as a warning).
    Their exceptions are retrieved (not raised): a stopped task's error was its own to report."""
    given = [task for task in tasks if task is not None]
    pending = {task for task in given if not task.done()}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while pending:
        for task in pending:
            task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            log.warning(
                "%d task(s) did not stop within %.0f s: %s", len(pending), bound, sorted(t.get_name() for t in pending)
            )
            break
        _done, pending = await asyncio.wait(pending, timeout=min(AGAIN_SECONDS, left))
    for task in given:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log "exception was never retrieved"
    return pending


async def stop_task(task: asyncio.Task[Any] | None, *, bound: float = 30.0) -> bool:
    """:func:`stop_tasks` for one task; whether it ended."""
    return not await stop_tasks([task], bound=bound)
