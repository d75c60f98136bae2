"""One clear log line per state change of a dependency, instead of a traceback per failed attempt.

During a NATS or PostgreSQL outage every reconnect attempt and every failed store used to print
a full traceback (thousands in a few seconds). :class:`Outage` logs the first failure as one
WARNING line, stays quiet (DEBUG) while the failure lasts, and logs one INFO line when the
dependency works again, with how long it was down.

:func:`nats_callbacks` are the connection callbacks for ``nats.connect`` built on it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Outage", "nats_callbacks"]


def _describe(exc: BaseException | str) -> str:
    if isinstance(exc, str):
        return exc
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Outage:
    """Tracks whether ``what`` works; logs only when that changes."""

    def __init__(self, what: str, logger: logging.Logger) -> None:
        self.what = what
        self.log = logger
        self.since: float | None = None  # monotonic time of the first failure of the current outage
        self.last_error: str | None = None
        self.closing = False  # set by the owner when it shuts the connection down on purpose

    @property
    def down(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException | str, doing: str = "") -> None:
        self.last_error = _describe(exc)
        if self.closing:  # shutting down: not an outage, nothing will be retried
            self.log.info("%s while closing: %s", self.what, self.last_error)
            return
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning("%s unavailable%s (%s); retrying quietly", self.what, doing, self.last_error)
        else:
            self.log.debug("%s still unavailable: %s", self.what, self.last_error)

    def ok(self) -> None:
        if self.since is not None:
            self.log.info("%s available again after %.1f s", self.what, time.monotonic() - self.since)
            self.since = None
            self.last_error = None


def nats_callbacks(outage: Outage, *, on_reconnected: Callable[[], Awaitable[None]] | None = None) -> dict[str, Any]:
    """``error_cb``/``disconnected_cb``/``reconnected_cb`` for ``nats.connect``: one line per change."""

    refusals: set[str] = set()

    async def error_cb(exc: Exception) -> None:
        text = _describe(exc)
        if "violation" in text.lower():  # NATS refused a subject or the credentials: not an outage
            if text not in refusals and len(refusals) < 100:  # one ERROR line per refusal, however often
                refusals.add(text)
                outage.log.error(
                    "%s refused: %s (konnectz_contracts.nats_auth grants it no such access)", outage.what, text
                )
            return
        outage.failed(exc)

    async def disconnected_cb() -> None:
        outage.failed("disconnected")

    async def reconnected_cb() -> None:
        outage.ok()
        if on_reconnected is not None:
            await on_reconnected()

    return {"error_cb": error_cb, "disconnected_cb": disconnected_cb, "reconnected_cb": reconnected_cb}
