"""The run states shared in NATS (:mod:`konnectz_contracts.run_control`): ``KZ_ACTIVE`` and ``KZ_CANCELS``.

Every read and write of those two buckets goes through this module (the worker, the api's routes
and the concurrency limit all use it), so their keys and values have one definition:

- :func:`mark` writes a run's :class:`~konnectz_contracts.run_control.ActiveRun` (QUEUED, RUNNING
  or WAITING); :func:`clear` deletes it once the run's TaskEvent is stored; :func:`list_active`
  lists one konnect's entries (a subject-filtered watch: only that konnect's keys are read).
- :func:`request_cancel` stores a :class:`~konnectz_contracts.run_control.CancelRequest`;
  :func:`cancel_requested` reads one; the worker checks at each step boundary through a
  :class:`CancelBook`, which follows the bucket with one watch, so the check is a look-up in memory,
  not a round trip per step (docs/performance.md).
- :func:`wake` brings a run waiting in a delay back now: it deletes the delay's timer (a JetStream
  scheduled message, :mod:`konnectz_runner.bus.timers`) and publishes its RunRequest at once, so a
  cancelled waiting run ends now, not when its timer would have fired.

Both buckets keep one value per key and expire entries (``ACTIVE_TTL_SECONDS``,
``CANCEL_TTL_SECONDS``), so an entry left by a crashed process cannot stay for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime
from typing import TypeVar

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig
from nats.js.errors import KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from pydantic import BaseModel, ValidationError

from konnectz_contracts.events import STREAM_RUNS, RunRequest, run_subject
from konnectz_contracts.run_control import (
    ACTIVE_TTL_SECONDS,
    CANCEL_TTL_SECONDS,
    KV_ACTIVE,
    KV_CANCELS,
    ActiveRun,
    CancelRequest,
    active_key,
    active_prefix,
    cancel_key,
)
from konnectz_runner.bus.kv import kv_config
from konnectz_runner.bus.timers import continuation_key, timer_subject
from konnectz_runner.tasks import stop_task

_M = TypeVar("_M", bound=BaseModel)

__all__ = [
    "LIST_LIMIT",
    "ActiveWatch",
    "CancelBook",
    "bucket_configs",
    "buckets",
    "cancel_requested",
    "clear",
    "get_active",
    "list_active",
    "mark",
    "request_cancel",
    "wake",
]

log = logging.getLogger(__name__)

#: At most this many active runs are listed for one konnect (the oldest first are not guaranteed).
LIST_LIMIT = 200
_PUBLISH_TIMEOUT = 5.0


def bucket_configs(replicas: int = 1) -> list[KeyValueConfig]:
    """KZ_ACTIVE and KZ_CANCELS as Konnectz creates them (one value per key, with a TTL), on ``replicas`` servers."""
    return [
        kv_config(KV_ACTIVE, ttl=ACTIVE_TTL_SECONDS, replicas=replicas),
        kv_config(KV_CANCELS, ttl=CANCEL_TTL_SECONDS, replicas=replicas),
    ]


async def buckets(js: JetStreamContext) -> tuple[KeyValue, KeyValue]:
    """(KZ_ACTIVE, KZ_CANCELS); they exist once :func:`konnectz_runner.bus.events.ensure_streams` ran."""
    return await js.key_value(KV_ACTIVE), await js.key_value(KV_CANCELS)


async def mark(kv: KeyValue, entry: ActiveRun) -> None:
    """Write (or overwrite) the run's KZ_ACTIVE entry."""
    await kv.put(active_key(entry.owner_id, entry.konnect_id, entry.run_id), entry.model_dump_json().encode())


async def clear(kv: KeyValue, owner_id: int, konnect_id: int, run_id: str) -> None:
    """Delete the run's KZ_ACTIVE entry (its TaskEvent is stored). Deleting a missing entry is fine."""
    with contextlib.suppress(KeyNotFoundError):
        await kv.purge(active_key(owner_id, konnect_id, run_id))


async def _read(kv: KeyValue, key: str, model: type[_M]) -> _M | None:
    """The entry ``key`` as a ``model``, or None when it is missing, empty or not one."""
    try:
        entry = await kv.get(key)
    except KeyNotFoundError:
        return None
    if not entry.value:
        return None
    try:
        return model.model_validate_json(entry.value)
    except ValidationError:
        return None


async def get_active(kv: KeyValue, owner_id: int, konnect_id: int, run_id: str) -> ActiveRun | None:
    return await _read(kv, active_key(owner_id, konnect_id, run_id), ActiveRun)


async def list_active(kv: KeyValue, owner_id: int, konnect_id: int, *, limit: int = LIST_LIMIT) -> list[ActiveRun]:
    """The konnect's active runs (at most ``limit``), oldest ``since`` first."""
    watcher = await kv.watch(f"{active_prefix(owner_id, konnect_id)}.*", ignore_deletes=True)
    found: list[ActiveRun] = []
    try:
        async for entry in watcher:
            if entry is None:  # the initial values are all delivered
                break
            if not entry.value:
                continue
            with contextlib.suppress(ValidationError):
                found.append(ActiveRun.model_validate_json(entry.value))
            if len(found) >= limit:
                break
    finally:
        with contextlib.suppress(Exception):
            await watcher.stop()
    found.sort(key=lambda run: run.since)
    return found


async def request_cancel(kv: KeyValue, request: CancelRequest) -> None:
    await kv.put(cancel_key(request.run_id), request.model_dump_json().encode())


async def cancel_requested(kv: KeyValue, run_id: str) -> CancelRequest | None:
    """The run's CancelRequest, or None (also when the bucket cannot be read: the run goes on)."""
    return await _read(kv, cancel_key(run_id), CancelRequest)


async def wake(js: JetStreamContext, run: ActiveRun) -> bool:
    """Bring a run waiting in delay step ``run.step_id`` back now. True when its timer was found,
    deleted and its RunRequest published; False when there was no timer (it fired meanwhile, or the
    run is not waiting), in which case the run comes back by itself."""
    if run.status != "WAITING" or not run.step_id:
        return False
    key = continuation_key(run.run_id, run.step_id)
    try:
        stored = await js.get_last_msg(STREAM_RUNS, timer_subject(run.konnect_id, key))
    except NotFoundError:
        return False
    if stored.data is None or stored.seq is None:
        return False
    try:
        waiting = RunRequest.model_validate_json(stored.data)
    except ValidationError:
        return False
    try:
        # Deleted first: whoever deletes the timer publishes the run (the server purges it when it fires).
        if not await js.delete_msg(STREAM_RUNS, stored.seq):
            return False
    except NotFoundError:
        return False
    # Where the server would have delivered it (the pool's subjects differ from the shared ones).
    target = (stored.headers or {}).get("Nats-Schedule-Target") or run_subject(waiting.konnect_id)
    await asyncio.wait_for(
        js.publish(
            target,
            stored.data,
            headers={"Nats-Msg-Id": f"wake:{key}"},
            stream=STREAM_RUNS,
        ),
        _PUBLISH_TIMEOUT,
    )
    log.info("Run %s: woken from its delay %s", run.run_id, run.step_id)
    return True


class CancelBook:
    """The cancel requests of ``KZ_CANCELS``, followed by one watch per worker.

    Once the watch has delivered the bucket's current values, :meth:`cancelled_by` answers from memory.
    Before that, after the connection to NATS was lost (until the watch has caught up again), and
    above ``MAX_ENTRIES`` requests, it reads the key as before, so a cancel is never missed: a request
    stored before the check is seen by either way (the watch delivers it within the server's push).
    """

    MAX_ENTRIES = 100_000
    REWATCH_CHECK_SECONDS = 5.0

    def __init__(self, kv: KeyValue, nc: object | None = None) -> None:
        self.kv = kv
        self._nc = nc
        self._by: dict[str, str] = {}  # run id -> who cancelled it
        self._live_at: int | None = None  # the connection's reconnect count when the watch caught up
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    def _reconnects(self) -> int:
        stats = getattr(self._nc, "stats", None) or {}
        return int(stats.get("reconnects", 0))

    @property
    def live(self) -> bool:
        connected = self._nc is None or bool(getattr(self._nc, "is_connected", True))
        return connected and self._live_at is not None and self._live_at == self._reconnects()

    async def cancelled_by(self, run_id: str) -> str | None:
        """Who cancelled ``run_id``, or None (also when the bucket cannot be read: the run goes on)."""
        if self.live:
            return self._by.get(run_id)
        request = await cancel_requested(self.kv, run_id)
        return request.by if request is not None else None

    def _apply(self, book: dict[str, str], key: str, value: bytes | None, operation: str | None) -> None:
        run_id = key.removeprefix(cancel_key(""))
        if operation in ("DEL", "PURGE") or not value:
            book.pop(run_id, None)
            return
        try:
            book[run_id] = CancelRequest.model_validate_json(value).by
        except ValidationError:
            book.pop(run_id, None)

    async def _follow(self) -> None:
        while True:
            since = self._reconnects()
            try:
                watcher = await self.kv.watchall()
                try:
                    loading: dict[str, str] | None = {}
                    while True:
                        try:
                            entry = await watcher.updates(timeout=self.REWATCH_CHECK_SECONDS)
                        except Exception:  # nats.errors.TimeoutError: nothing new
                            entry = None
                            if loading is not None:
                                continue
                        if self._reconnects() != since:
                            break  # the server may have lost the watch's consumer: watch again
                        if entry is None:
                            if loading is not None:  # every current value delivered
                                self._by, loading = loading, None
                                self._live_at = since
                            continue
                        book = loading if loading is not None else self._by
                        self._apply(book, entry.key, entry.value, entry.operation)
                        if len(book) > self.MAX_ENTRIES:
                            log.warning("%s holds over %d requests: cancels are read per run", KV_CANCELS, len(book))
                            self._live_at = None
                            return
                finally:
                    with contextlib.suppress(Exception):
                        await watcher.stop()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("Following %s failed (%s); again", KV_CANCELS, _why(exc))
            self._live_at = None
            await asyncio.sleep(1.0)


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class ActiveWatch:
    """One run's entry in KZ_ACTIVE and its cancel check, as the worker keeps them
    (:class:`konnectz_runner.engine.flow.RunWatch`). A bucket that cannot be read or written never fails
    the run: the entry is a view, and an unreadable cancel request means the run goes on.

    With ``listed_after`` > 0 the entry is written only once the run has gone on that long
    (:data:`~konnectz_contracts.run_control.LISTED_AFTER_SECONDS`), with its step at that moment, and
    kept current from then on; a run that ends sooner writes and deletes nothing. A run that waits in a
    delay is listed at once (it leaves the worker)."""

    def __init__(
        self, active: KeyValue | None, cancels: CancelBook | None, entry: ActiveRun, *, listed_after: float = 0.0
    ) -> None:
        self.active = active
        self.cancels = cancels
        self.entry = entry
        self._listed_after = listed_after
        self._listed = listed_after <= 0
        self._timer: asyncio.TimerHandle | None = None
        self._listing: asyncio.Task[None] | None = None

    async def _put(self, **update: object) -> None:
        self.entry = self.entry.model_copy(update=update)
        if self.active is None:
            return
        if not self._listed:
            if self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self._listed_after, self._list)
            return
        if self._listing is not None:  # the first write goes before this one
            await self._listing
            self._listing = None
        await self._write()

    def _list(self) -> None:
        """The run has gone on ``listed_after`` seconds: write its entry as it is now."""
        self._timer = None
        self._listed = True
        self._listing = asyncio.create_task(self._write())

    async def _write(self) -> None:
        assert self.active is not None
        try:
            await mark(self.active, self.entry)
        except Exception as exc:
            log.warning("Run %s: its active-run entry was not written (%s)", self.entry.run_id, _why(exc))

    def forget(self) -> None:
        """The run left this worker without :meth:`done` (it is redelivered): nothing more is written."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def at_step(self, step_id: str) -> None:
        await self._put(status="RUNNING", step_id=step_id, resume_at=None)

    async def waiting(
        self, step_id: str, resume_at: datetime, waiting_for: str | None = None, since: datetime | None = None
    ) -> None:
        self.forget()
        self._listed = True
        await self._put(
            status="WAITING", step_id=step_id, resume_at=resume_at, waiting_for=waiting_for, waiting_since=since
        )

    async def cancelled(self) -> str | None:
        if self.cancels is None:
            return None
        try:
            return await self.cancels.cancelled_by(self.entry.run_id)
        except Exception as exc:
            log.warning("Run %s: its cancel request could not be read (%s)", self.entry.run_id, _why(exc))
            return None

    async def done(self) -> None:
        self.forget()
        if self._listing is not None:
            await self._listing
            self._listing = None
        if self.active is None or not self._listed:
            return
        try:
            await clear(self.active, self.entry.owner_id, self.entry.konnect_id, self.entry.run_id)
        except Exception as exc:  # expires after ACTIVE_TTL_SECONDS
            log.warning("Run %s: its active-run entry was not deleted (%s)", self.entry.run_id, _why(exc))
