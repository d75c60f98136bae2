"""A background pass repeated at a fixed period (the local scheduler and poller)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from konnectz_contracts.spec import FlowSpec
from konnectz_runner.tasks import stop_task

log = logging.getLogger(__name__)

TriggerT = TypeVar("TriggerT", bound=BaseModel)
#: A konnect's trigger as a ticking pass keeps it: (konnect id, trigger as JSON), so a changed
#: trigger is a new key.
TriggerKey = tuple[int, str]


def keyed_triggers(
    specs: Iterable[FlowSpec], kind: type[TriggerT], kept: dict[TriggerKey, Any]
) -> list[tuple[FlowSpec, TriggerT, TriggerKey]]:
    """The konnects of ``specs`` started by a ``kind`` trigger, each with its trigger and key; the keys
    of ``kept`` (a pass's state per trigger) that are no longer among them are dropped."""
    found: list[tuple[FlowSpec, TriggerT, TriggerKey]] = []
    for spec in specs:
        trigger = spec.trigger
        if isinstance(trigger, kind):
            found.append((spec, trigger, (spec.konnect_id, trigger.model_dump_json())))
    for gone in set(kept) - {key for _, _, key in found}:
        del kept[gone]
    return found


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
        await stop_task(self._task)

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s (%s); retrying", self.failure, exc or type(exc).__name__)
            await asyncio.sleep(self.period())
