"""Run slots: a konnect's concurrency limit (``RunControl.max_concurrency``) across every runner.

One ``KZ_SLOTS`` KV entry per konnect (key ``k<konnect id>``) holds who runs and who waits::

    {"holders": {"<run id>": <lease expiry, unix seconds>},
     "queue": [[<stream sequence>, "<run id>", <lease expiry>], ...]}   # ordered by sequence

Every change is a compare-and-set (``kv.update`` with the revision read, ``kv.create`` for a new
key); a writer that lost the race reads again. A run starts when it holds a slot: fewer than the
limit hold one and no run that arrived before it (a lower KZ_RUNS stream sequence) is waiting.
Otherwise it joins the queue, ordered by its run message's stream sequence, so waiting runs start
in the order they arrived, whichever runner holds them.

Stale holders: holder and queue entries carry a lease expiry (:data:`SLOT_LEASE_SECONDS`), renewed
while the run executes or waits; an entry whose runner died expires and is dropped by the next
writer, so a dead runner blocks a konnect for at most one lease. The bucket's entries expire
:data:`SLOTS_TTL_SECONDS` after their last write (an idle konnect's key goes away).

Limits: a konnect's queue holds at most :data:`MAX_QUEUE` runs; a run beyond it is handed back to
KZ_RUNS (``nak`` with a delay) and queues when it comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import (
    BadRequestError,
    KeyDeletedError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

from konnectz_contracts.events import RunRequest
from konnectz_contracts.run_control import KV_SLOTS, ActiveRun
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.bus import mark_active as mark
from konnectz_runner.bus import open_bucket

__all__ = [
    "MAX_QUEUE",
    "SLOTS_TTL_SECONDS",
    "SLOT_LEASE_SECONDS",
    "QueueFull",
    "Slots",
    "StoppedWaiting",
    "put_queued",
    "slot_key",
    "slots_bucket",
]

log = logging.getLogger(__name__)

#: A holder or waiter not renewed for this long is taken for dead and dropped.
SLOT_LEASE_SECONDS = 30.0
SLOTS_TTL_SECONDS = 24 * 3600
MAX_QUEUE = 2000


class QueueFull(Exception):
    """The konnect already has :data:`MAX_QUEUE` runs waiting."""


class StoppedWaiting(Exception):
    """``give_up`` said so (the waiting run was cancelled): it left the queue without a slot."""


def slot_key(konnect_id: int) -> str:
    return f"k{int(konnect_id)}"


async def slots_bucket(js: JetStreamContext, *, bucket: str = KV_SLOTS, replicas: int = 1) -> KeyValue:
    """The ``KZ_SLOTS`` bucket (made if missing) on ``replicas`` servers."""
    return await open_bucket(js, bucket, SLOTS_TTL_SECONDS, replicas)


async def put_queued(active: KeyValue, spec: FlowSpec, run: RunRequest) -> None:
    """Show ``run`` as QUEUED in ``KZ_ACTIVE`` (best effort: the listing is a convenience). The worker
    overwrites it with RUNNING once the run has its slot (:class:`konnectz_runner.bus.active.ActiveWatch`)."""
    entry = ActiveRun(
        run_id=run.run_id,
        konnect_id=spec.konnect_id,
        owner_id=spec.owner_id,
        status="QUEUED",
        since=datetime.now(UTC),
        revision=getattr(spec, "revision", None),
    )
    try:
        await mark(active, entry)
    except Exception as exc:
        log.debug("Run %s: its QUEUED entry was not written (%s)", run.run_id, exc or type(exc).__name__)


class _State:
    def __init__(self, raw: bytes | None) -> None:
        data: dict[str, Any] = json.loads(raw) if raw else {}
        self.holders: dict[str, float] = {str(k): float(v) for k, v in (data.get("holders") or {}).items()}
        self.queue: list[tuple[int, str, float]] = [(int(s), str(r), float(e)) for s, r, e in data.get("queue") or []]

    def dump(self) -> bytes:
        return json.dumps(
            {"holders": self.holders, "queue": [list(entry) for entry in self.queue]}, separators=(",", ":")
        ).encode()

    def prune(self, now: float) -> None:
        self.holders = {run: expiry for run, expiry in self.holders.items() if expiry > now}
        self.queue = sorted(entry for entry in self.queue if entry[2] > now)


class Slots:
    """Acquire, renew and release konnect run slots in ``KZ_SLOTS`` (one instance per event loop)."""

    def __init__(
        self,
        kv: KeyValue,
        *,
        lease: float = SLOT_LEASE_SECONDS,
        poll: float = 0.1,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.kv = kv
        self.lease = lease
        self.poll = poll
        self.clock = clock
        self._released: dict[int, asyncio.Event] = {}

    async def _change(self, konnect_id: int, change: Callable[[_State, float], bool]) -> bool:
        """Apply ``change`` (which returns its answer and mutates the state) by compare-and-set."""
        key = slot_key(konnect_id)
        while True:
            try:
                entry = await self.kv.get(key)
                raw, revision = entry.value, entry.revision
            except (KeyNotFoundError, KeyDeletedError):  # never written, expired (or deleted by hand)
                raw, revision = None, None
            state = _State(raw)
            before = state.dump()
            answer = change(state, self.clock())
            after = state.dump()
            if after == before and raw is not None:
                return answer
            try:
                if revision is None:
                    await self.kv.create(key, after)
                else:
                    await self.kv.update(key, after, last=revision)
                return answer
            except KeyWrongLastSequenceError:
                await asyncio.sleep(random.uniform(0, 0.01))
            except BadRequestError as exc:
                if "wrong last sequence" not in str(exc).lower():
                    raise
                await asyncio.sleep(random.uniform(0, 0.01))

    async def try_acquire(self, konnect_id: int, run_id: str, seq: int, limit: int) -> bool:
        """Take a slot if one is free and no earlier run waits; else join (or stay in) the queue.
        Raises :class:`QueueFull` when the queue is full and the run is not in it yet."""
        full = False

        def change(state: _State, now: float) -> bool:
            nonlocal full
            state.prune(now)
            if run_id in state.holders:
                if state.holders[run_id] - now < self.lease * 2 / 3:
                    state.holders[run_id] = now + self.lease
                return True
            mine = next((entry for entry in state.queue if entry[1] == run_id), None)
            ahead = [entry for entry in state.queue if entry[1] != run_id and entry[0] < seq]
            if len(state.holders) < limit and not ahead:
                if mine is not None:
                    state.queue.remove(mine)
                state.holders[run_id] = now + self.lease
                return True
            if mine is None:
                if len(state.queue) >= MAX_QUEUE:
                    full = True
                    return False
                state.queue = sorted([*state.queue, (seq, run_id, now + self.lease)])
            elif mine[2] - now < self.lease * 2 / 3:
                state.queue = sorted([*(e for e in state.queue if e is not mine), (mine[0], run_id, now + self.lease)])
            return False

        got = await self._change(konnect_id, change)
        if full:
            raise QueueFull(f"konnect {konnect_id} has {MAX_QUEUE} runs waiting already")
        return got

    async def acquire(
        self,
        konnect_id: int,
        run_id: str,
        seq: int,
        limit: int,
        *,
        on_queued: Callable[[], Awaitable[None]] | None = None,
        give_up: Callable[[], Awaitable[bool]] | None = None,
        give_up_every: float = 1.0,
    ) -> bool:
        """Wait (in order) until ``run_id`` holds a slot. Returns whether it had to queue;
        ``on_queued`` is awaited once when it starts waiting; ``give_up`` is asked every
        ``give_up_every`` seconds while it waits: True leaves the queue (:class:`StoppedWaiting`)."""
        if await self.try_acquire(konnect_id, run_id, seq, limit):
            return False
        if on_queued is not None:
            await on_queued()
        asked = time.monotonic()
        while True:
            if give_up is not None and time.monotonic() - asked >= give_up_every:
                asked = time.monotonic()
                if await give_up():
                    await self.release(konnect_id, run_id)
                    raise StoppedWaiting(run_id)
            released = self._released.setdefault(konnect_id, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(released.wait(), self.poll * random.uniform(0.75, 1.5))
            if await self.try_acquire(konnect_id, run_id, seq, limit):
                return True

    async def renew(self, konnect_id: int, run_id: str) -> bool:
        """Extend a held slot's lease; False if the run no longer holds it (its lease ran out)."""

        def change(state: _State, now: float) -> bool:
            state.prune(now)
            if run_id not in state.holders:
                return False
            state.holders[run_id] = now + self.lease
            return True

        return await self._change(konnect_id, change)

    async def release(self, konnect_id: int, run_id: str) -> None:
        """Give the slot back (and leave the queue, for a run that stopped waiting)."""

        def change(state: _State, now: float) -> bool:
            state.prune(now)
            state.holders.pop(run_id, None)
            state.queue = [entry for entry in state.queue if entry[1] != run_id]
            return True

        await self._change(konnect_id, change)
        event = self._released.pop(konnect_id, None)
        if event is not None:  # waiters in this process look again at once
            event.set()

    async def keep(self, konnect_id: int, run_id: str) -> None:
        """Renew a held slot every third of its lease until cancelled."""
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                if not await self.renew(konnect_id, run_id):
                    log.warning("Run %s: its slot lease had run out; it goes on all the same", run_id)
            except Exception as exc:
                log.warning("Run %s: its slot lease was not renewed (%s)", run_id, exc or type(exc).__name__)

    async def holders(self, konnect_id: int) -> tuple[list[str], list[str]]:
        """(holders, waiting run ids in order) of a konnect, expired entries left out."""
        try:
            entry = await self.kv.get(slot_key(konnect_id))
        except (KeyNotFoundError, KeyDeletedError):
            return [], []
        state = _State(entry.value)
        state.prune(self.clock())
        return sorted(state.holders), [run for _seq, run, _exp in state.queue]
