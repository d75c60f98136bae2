"""Rate budgets per app account, shared by every runner process (and the pool) through NATS KV.

The bucket's name, its keys, its value (and how it is read) and the override's bounds are
:mod:`konnectz_contracts.budgets`.

An app's manifest may say how many requests per second one account may send (``rate_limit.
requests_per_second``); the account's owner may override it (``app_accounts.rate_limit_rps`` in the
api, handed to the runner with the account's credentials by the credential broker). Before each
request to the app (retries included) a step takes a token from the account's bucket:

- bucket ``KZ_BUDGETS`` (history 1, entries expire :data:`~konnectz_contracts.budgets.TTL_SECONDS`
  after their last write: an idle account's bucket is full again long before that), key ``acct.<app account id>``;
- value (JSON) ``{"tokens", "updated_at", "rate", "burst", "recent"}``: ``tokens`` after the last take
  at ``updated_at`` (epoch seconds), refilled at ``rate`` per second up to ``burst``; ``recent`` counts
  the requests of each of the last 60 seconds (``{"<epoch second>": n}``) for the budget display.
- Taking is a compare-and-set (:meth:`nats.js.kv.KeyValue.update` with the revision read, or ``create``
  for a new key); on a conflict (another process took a token meanwhile) it reads again.
- A take may leave ``tokens`` below zero: the taker *reserves* the next free slot and sleeps until it
  (``-tokens / rate`` seconds). Reservations are serialised by the compare-and-set, so every process
  sees the slots already promised: the requests leave at most ``burst`` at once and then one every
  ``1 / rate`` seconds (2% more: :data:`~konnectz_contracts.budgets.HEADROOM`), in the order they
  asked, whatever the number of processes, with two KV operations per request (waiting costs none).
  No request is sent to be refused with a 429.
- A taker that wakes more than half a slot late (its process stalled) forfeits its slot and reserves
  another (at most :data:`MAX_LATE` times): sent late, its request could reach the app together with
  the next slot's. A forfeited slot only makes the budget stricter.

When NATS KV is unavailable (no bucket, no connection, or operations timing out for
:data:`KV_PATIENCE_SECONDS` while connected), the step falls back to spacing its requests within this
process (:class:`LocalSpacing`, the behaviour before budgets existed) and one WARNING line is logged
per outage; the run is never failed for it. Clocks: ``updated_at`` is wall-clock time, so runner
hosts need synchronised clocks (NTP): a host whose clock is ``d`` seconds ahead of the last writer's
counts ``d`` seconds of refill too many (at most ``burst`` tokens); one behind waits ``d`` too long.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from konnectz_contracts.budgets import KV_BUDGETS, budget_key, pace, recent_counts, refilled
from konnectz_runner.outage import Outage

__all__ = [
    "Budget",
    "Budgets",
    "LocalSpacing",
    "Taken",
    "wait_reason",
]

log = logging.getLogger(__name__)

#: How long one KV operation may take before it is tried again.
KV_TIMEOUT_SECONDS = 2.0
#: How long slow KV operations are retried while the NATS connection is up, before falling back to
#: per-process spacing (a loaded server answers late; falling back early would overshoot the budget).
KV_PATIENCE_SECONDS = 60.0
#: A taker that wakes this late after its slot (half a slot, within these bounds) forfeits it and
#: reserves another (at most MAX_LATE times): sent now, its request could arrive together with the next.
MIN_LATENESS = 0.02
MAX_LATENESS = 0.1
MAX_LATE = 3


@dataclass(frozen=True)
class Budget:
    """The budget of one account: ``rate`` requests per second, ``burst`` at once."""

    account_id: int
    rate: float
    burst: int = 1
    source: str = "app default"  # or "override"

    @property
    def pace(self) -> float:
        """The rate the slots are spaced at: the budget's rate less the headroom."""
        return pace(self.rate)


@dataclass(frozen=True)
class Taken:
    """What taking a token cost: the seconds slept, and whether the shared bucket was used."""

    waited: float
    shared: bool


class LocalSpacing:
    """Spacing within one process (the fallback when NATS KV is unavailable)."""

    def __init__(self) -> None:
        self._next: dict[int, float] = {}

    def reserve(self, budget: Budget) -> float:
        now = time.monotonic()
        slot = max(now, self._next.get(budget.account_id, now))
        self._next[budget.account_id] = slot + 1 / budget.pace
        return slot - now


class Budgets:
    """Takes tokens from the shared buckets in ``KZ_BUDGETS`` (one per app account)."""

    def __init__(self, js: JetStreamContext | None) -> None:
        self.js = js
        self._kv: KeyValue | None = None
        self.local = LocalSpacing()
        self.outage = Outage(f"Rate budgets ({KV_BUDGETS})", log)

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            if self.js is None:
                raise RuntimeError("no NATS connection")
            self._kv = await asyncio.wait_for(self.js.key_value(KV_BUDGETS), KV_TIMEOUT_SECONDS)
        return self._kv

    def _connected(self) -> bool:
        nc = getattr(self.js, "_nc", None)
        return bool(nc is not None and nc.is_connected)

    async def _reserve(self, budget: Budget) -> float:
        """Reserve the next slot in the shared bucket (one compare-and-set); returns when it is due
        (epoch seconds). Raises when KV fails."""
        kv = await self._bucket()
        key = budget_key(budget.account_id)
        while True:
            try:
                entry = await asyncio.wait_for(kv.get(key), KV_TIMEOUT_SECONDS)
                revision: int | None = entry.revision
                loaded = json.loads(entry.value) if entry.value else None
                state = loaded if isinstance(loaded, dict) else None
            except KeyNotFoundError:
                revision, state = None, None
            now = time.time()
            tokens = refilled(state, rate=budget.rate, burst=budget.burst, now=now) - 1
            due = now if tokens >= 0 else now - tokens / budget.pace
            recent = recent_counts(state, now)
            second = str(int(due))
            recent[second] = recent.get(second, 0) + 1
            value = json.dumps(
                {"tokens": tokens, "updated_at": now, "rate": budget.rate, "burst": budget.burst, "recent": recent}
            ).encode()
            try:
                if revision is None:
                    await asyncio.wait_for(kv.create(key, value), KV_TIMEOUT_SECONDS)
                else:
                    await asyncio.wait_for(kv.update(key, value, last=revision), KV_TIMEOUT_SECONDS)
            except KeyWrongLastSequenceError:
                await asyncio.sleep(random.uniform(0, 0.005))  # another process took a slot: read again
                continue
            return due

    async def _take_shared(self, budget: Budget) -> float:
        """Reserve a slot, sleep until it; returns the seconds slept. A taker that wakes too late (its
        process stalled) forfeits its slot and reserves another, at most :data:`MAX_LATE` times."""
        slept = 0.0
        give_up = time.monotonic() + KV_PATIENCE_SECONDS
        late_tries = 0
        while True:
            try:
                due = await self._reserve(budget)
            except (asyncio.CancelledError, BucketNotFoundError):
                raise
            except Exception as exc:
                # Slow or busy, not gone (a timeout, JetStream unavailable for a moment): try again
                # while connected; fall back only when the connection is down or patience ran out
                # (a timed-out write that was applied only wastes a slot).
                if not self._connected() or time.monotonic() > give_up:
                    raise
                log.debug("Rate budget of account %s: %s; trying again", budget.account_id, exc)
                await asyncio.sleep(random.uniform(0.05, 0.15))
                continue
            wait = due - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
                slept += wait
            late = time.time() - due
            if late <= max(MIN_LATENESS, min(MAX_LATENESS, 0.5 / budget.rate)) or late_tries >= MAX_LATE:
                return slept
            late_tries += 1

    async def take(self, budget: Budget) -> Taken:
        """Take one token for a request of ``budget``'s account, sleeping until there is one."""
        try:
            slept = await self._take_shared(budget)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.outage.failed(exc, "; requests are spaced within this process only")
            self._kv = None
            wait = self.local.reserve(budget)
            if wait > 0:
                await asyncio.sleep(wait)
            return Taken(waited=wait, shared=False)
        self.outage.ok()
        return Taken(waited=slept, shared=True)


def _rate_text(rate: float) -> str:
    shown = f"{rate:g}"
    return f"{shown} request/s" if rate == 1 else f"{shown} requests/s"


def wait_reason(app_name: str, account_name: str | None, budget: Budget, waited: float) -> str:
    """The task log's line for a step that waited, e.g. "Waited 1.4 s for the rate budget of Slack
    (account 'Work'): 1 request/s"."""
    account = f"account '{account_name}'" if account_name else f"account {budget.account_id}"
    source = " (your override)" if budget.source == "override" else ""
    return f"Waited {waited:.1f} s for the rate budget of {app_name} ({account}): {_rate_text(budget.rate)}{source}"
