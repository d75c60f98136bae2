"""Rate budgets per app account: the ``KZ_BUDGETS`` bucket, its keys, its stored value and the
override's bounds.

The runner takes tokens from an account's bucket (its ``apps.budgets`` module, which writes the
value); the api shows the budget (:func:`budget_usage`, which reads it) and checks an owner's
override against :data:`MIN_RATE` and :data:`MAX_RATE`. The value (JSON) is
``{"tokens", "updated_at", "rate", "burst", "recent"}``: ``tokens`` after the last take at
``updated_at`` (epoch seconds), refilled at the pace (:func:`pace`) up to ``burst``; ``recent`` counts
the requests of each of the last :data:`RECENT_SECONDS` seconds (``{"<epoch second>": n}``).
"""

from __future__ import annotations

import json
import time
from typing import Any

__all__ = [
    "HEADROOM",
    "KV_BUDGETS",
    "MAX_RATE",
    "MIN_RATE",
    "RECENT_SECONDS",
    "TTL_SECONDS",
    "budget_key",
    "budget_usage",
    "pace",
    "recent_counts",
    "refilled",
]

KV_BUDGETS = "KZ_BUDGETS"
#: An entry not written for this long is dropped (the bucket is full again long before: 1 token / 0.01 rps = 100 s).
TTL_SECONDS = 3600.0
#: The override's bounds (requests per second), also checked by the api.
MIN_RATE = 0.01
MAX_RATE = 1000.0


def budget_key(account_id: int) -> str:
    """The ``KZ_BUDGETS`` key of one app account."""
    return f"acct.{account_id}"


#: The seconds whose requests the value counts (``recent``), for the budget display.
RECENT_SECONDS = 60
#: Slots are paced this much below the rate (2%): a request leaves its runner a little after its
#: slot and reaches the app after a network and scheduling delay that varies from request to
#: request. Without headroom, a request delayed by more than one slot (0.2 s at 5/s) arrives in the
#: same window of the app's counter as the next one, and the app counts one request too many. With
#: it, the app's count over any 20-second window stays within the rate for delays up to 0.6 s at 5/s.
HEADROOM = 0.02


def pace(rate: float) -> float:
    """The rate the slots are spaced at: ``rate`` less :data:`HEADROOM`."""
    return rate * (1 - HEADROOM)


def refilled(state: dict[str, Any] | None, *, rate: float, burst: int, now: float) -> float:
    """The tokens of a stored value ``state`` at ``now`` for a budget of ``rate`` and ``burst``
    (``burst`` for no or a broken value; below zero while slots are reserved ahead)."""
    if state is None:
        return float(burst)
    try:
        tokens = float(state["tokens"])
        updated = float(state["updated_at"])
        stored_rate = float(state.get("rate") or rate)
    except (KeyError, TypeError, ValueError):
        return float(burst)
    if tokens < 0 and stored_rate > 0 and stored_rate != rate:
        # Slots reserved at another rate (the override changed): keep the time they promised.
        tokens = tokens * rate / stored_rate
    return min(float(burst), tokens + max(0.0, now - updated) * pace(rate))


def recent_counts(state: dict[str, Any] | None, now: float) -> dict[str, int]:
    """The stored requests per second of the last :data:`RECENT_SECONDS` seconds before ``now``."""
    recent = state.get("recent") if isinstance(state, dict) else None
    if not isinstance(recent, dict):
        return {}
    floor = int(now) - RECENT_SECONDS
    kept: dict[str, int] = {}
    for second, count in recent.items():
        try:
            if int(second) > floor and isinstance(count, int):
                kept[second] = count
        except ValueError:
            continue
    return kept


def budget_usage(raw: bytes | None, rate: float | None, burst: int, now: float | None = None) -> dict[str, Any]:
    """What the api shows of a stored value: tokens left now, requests in the last minute."""
    now = time.time() if now is None else now
    state: dict[str, Any] | None = None
    if raw:
        try:
            loaded = json.loads(raw)
            state = loaded if isinstance(loaded, dict) else None
        except ValueError:
            state = None
    recent = recent_counts(state, now)
    used = sum(count for second, count in recent.items() if int(second) <= int(now))
    tokens: float | None = None
    if rate:
        tokens = refilled(state, rate=rate, burst=burst, now=now)
    return {"tokens_left": None if tokens is None else round(tokens, 2), "used_last_minute": used}
