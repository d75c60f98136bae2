"""Background tasks of the api that must not die silently (the task-event consumer, the quota server).

:class:`Supervised` runs a coroutine factory; when the coroutine crashes (or returns while the
api is not stopping), it logs one line and starts it again after a backoff (0.5 s doubling up
to 30 s, back to 0.5 s after a minute of running). ``state`` is what ``/healthz`` reports:
``running``, ``restarting`` (crashed, waiting for the backoff; /healthz answers 503) or
``stopped``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Literal

__all__ = ["MAX_BACKOFF_SECONDS", "MIN_BACKOFF_SECONDS", "Supervised"]

log = logging.getLogger(__name__)

MIN_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
STABLE_SECONDS = 60.0

State = Literal["starting", "running", "restarting", "stopped"]


class Supervised:
    def __init__(
        self,
        name: str,
        factory: Callable[[], Awaitable[None]],
        *,
        min_backoff: float = MIN_BACKOFF_SECONDS,
        max_backoff: float = MAX_BACKOFF_SECONDS,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.name = name
        self.stopping = stopping  # set when the api stops: a task that returns then is done, not crashed
        self.factory = factory
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.state: State = "starting"
        self.last_error: str | None = None
        self.restarts = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def healthy(self) -> bool:
        return self.state in ("starting", "running")

    def problem(self) -> str | None:
        """Why the task is not working now, for /healthz; None while it runs."""
        if self.healthy:
            return None
        return f"{self.name} {self.state}: {self.last_error or 'not running'}"

    def start(self) -> None:
        self._task = asyncio.create_task(self._supervise(), name=f"supervised {self.name}")

    async def stop(self, within: float = 5.0) -> None:
        self._stopping = True
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(self._task, within)
        self.state = "stopped"

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = self.min_backoff
        while not self._stopping:
            started = loop.time()
            if self.state != "running":
                if self.restarts:
                    log.info("%s running again (restart %d)", self.name, self.restarts)
                self.state = "running"
            try:
                await self.factory()
                if self._stopping or (self.stopping is not None and self.stopping.is_set()):
                    break
                self.last_error = "it returned unexpectedly"
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.last_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
            if loop.time() - started > STABLE_SECONDS:
                backoff = self.min_backoff
            self.state = "restarting"
            self.restarts += 1
            log.error("%s stopped (%s); restarting in %.1f s", self.name, self.last_error, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)
        self.state = "stopped"
