"""One elected holder of a duty among runners: a NATS KV lock with a TTL.

The shared pool runs any number of runners, but a schedule must fire once per slot and a source
must be polled once per interval. Only the holder of the pool's lock runs those duties
(:class:`~konnectz_runner.clock.scheduler.LocalScheduler`, :class:`~konnectz_runner.clock.poller.LocalPoller`).
It needs nothing but NATS, so it works the same on Kubernetes, on a VM and in tests.

The lock is the key ``<name>`` of the ``KZ_LEADERS`` bucket, whose entries expire ``ttl`` seconds
after they were written (the bucket's ``max_age``):

- a candidate takes it with ``create`` (atomic: it fails while the key holds a live value);
- the holder renews it every ``ttl / 3`` with ``update`` on the revision it wrote last (a compare
  and swap: it fails if anyone else wrote the key since), which also restarts the expiry;
- a holder that could not renew for ``2/3 ttl`` (NATS unreachable, the process stalled) stops its
  duties at once, before the entry can expire and another runner take over: two holders never
  act at the same time as long as the clocks' rates agree (no synchronised clocks needed);
- a holder that stops deletes its entry (on its revision), so a successor takes over within one
  retry (``ttl / 3``); a killed holder's entry expires after ``ttl``.

Schedules are also safe without the lock (a fire's run id is derived from the konnect and the fire
time, and JetStream stores one publish per id): the lock saves the duplicate work and the duplicate
polling requests, and makes "once per slot" hold beyond JetStream's duplicate window.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable

from nats.js import JetStreamContext
from nats.js.errors import KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from konnectz_contracts.events import KV_LEADERS
from konnectz_runner.bus import open_bucket
from konnectz_runner.tasks import stop_task

__all__ = ["LEASE_SECONDS", "Election", "holder_id"]

log = logging.getLogger(__name__)

LEASE_SECONDS = 9.0


def holder_id() -> str:
    """Who this process is, as written into the lock: host (the pod's name on Kubernetes), pid, a nonce."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


async def leaders_bucket(
    js: JetStreamContext, ttl: float = LEASE_SECONDS, *, bucket: str = KV_LEADERS, replicas: int = 1
) -> KeyValue:
    """The ``KZ_LEADERS`` bucket (made if missing, on ``replicas`` servers; its entries expire ``ttl``
    seconds after a write)."""
    return await open_bucket(js, bucket, ttl, replicas)


def _lost_race(exc: Exception) -> bool:
    """True when a create/update failed because the key holds another value (not a NATS failure)."""
    return isinstance(exc, KeyWrongLastSequenceError) or "wrong last sequence" in str(exc).lower()


class Election:
    """Campaign for the lock ``name``; run ``on_elected`` when it is won and ``on_deposed`` when lost."""

    def __init__(
        self,
        js: JetStreamContext,
        name: str,
        *,
        on_elected: Callable[[], Awaitable[None]],
        on_deposed: Callable[[], Awaitable[None]],
        ttl: float = LEASE_SECONDS,
        holder: str | None = None,
        bucket: str = KV_LEADERS,
        replicas: int = 1,
    ) -> None:
        self.js = js
        self.name = name
        self.bucket = bucket
        self.replicas = replicas
        # The bucket's TTL when it exists (another process may have made it): the timings follow it.
        self.ttl = ttl
        self.holder = holder or holder_id()
        self._on_elected = on_elected
        self._on_deposed = on_deposed
        self._revision: int | None = None  # set while this process holds the lock
        self._renewed_at = 0.0
        self._task: asyncio.Task[None] | None = None

    @property
    def leading(self) -> bool:
        return self._revision is not None

    def start(self) -> None:
        self._task = asyncio.create_task(self._campaign(), name=f"konnectz-election-{self.name}")

    async def stop(self) -> None:
        """Stop campaigning; a holder ends its duties and frees the lock for a successor."""
        await stop_task(self._task)
        revision = self._revision
        await self._step_down("stopping")
        if revision is not None:
            with contextlib.suppress(Exception):
                kv = await leaders_bucket(self.js, self.ttl, bucket=self.bucket, replicas=self.replicas)
                await asyncio.wait_for(kv.delete(self.name, last=revision), 2.0)

    async def _campaign(self) -> None:
        loop = asyncio.get_running_loop()
        kv: KeyValue | None = None
        while True:
            try:
                if kv is None:
                    kv = await leaders_bucket(self.js, self.ttl, bucket=self.bucket, replicas=self.replicas)
                    self.ttl = (await kv.status()).ttl or self.ttl
                if self._revision is None:
                    self._revision = await kv.create(self.name, self.holder.encode())
                    self._renewed_at = loop.time()
                    log.info("Elected for %s (%s)", self.name, self.holder)
                    await self._on_elected()
                else:
                    # Bounded by the holder's deadline: a renewal that hangs must not outlive the lease.
                    remaining = self._renewed_at + 2 * self.ttl / 3 - loop.time()
                    self._revision = await asyncio.wait_for(
                        kv.update(self.name, self.holder.encode(), last=self._revision), max(remaining, 0.05)
                    )
                    self._renewed_at = loop.time()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._revision is not None:
                    if _lost_race(exc):
                        await self._step_down("another runner holds the lock")
                    elif loop.time() - self._renewed_at > 2 * self.ttl / 3:
                        await self._step_down(f"the lock could not be renewed ({exc or type(exc).__name__})")
                elif not _lost_race(exc):
                    log.debug("Campaign for %s failed: %s", self.name, exc or type(exc).__name__)
                    kv = None  # the bucket may be gone (NATS restarted without its store)
            await asyncio.sleep(self.ttl / 3)

    async def _step_down(self, why: str) -> None:
        if self._revision is None:
            return
        self._revision = None
        log.log(logging.INFO if why == "stopping" else logging.WARNING, "No longer elected for %s: %s", self.name, why)
        await self._on_deposed()
