"""A background pass repeated at a fixed period (the local scheduler and poller)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)


class Ticking:
    """Calls :meth:`tick` every :meth:`period` seconds in a task of its own; a failed pass (NATS down,
    a provider unreachable) is logged and the next pass tries again. Subclasses set ``task_name`` and
    ``failure`` (the log line's start) and implement ``tick`` and ``period``."""

    task_name = "konnectz-ticking"
    failure = "A pass failed"
    _task: asyncio.Task[None] | None = None

    def period(self) -> float:
        raise NotImplementedError

    async def tick(self) -> object:
        raise NotImplementedError

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=self.task_name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s (%s); retrying", self.failure, exc or type(exc).__name__)
            await asyncio.sleep(self.period())
