"""How many accepted runs may wait: a bound that follows how fast runs finish.

A fixed bound (``max_queued_runs``) keeps the backlog finite, but the time it takes to drain depends
on the machine: 1,000 queued runs drain in 1 s where runs finish at 1,000/s and in 4 s at 250/s.
:class:`Backlog` therefore also bounds the backlog in *seconds of work*: it follows the rate at
which the runs consumer gets through runs (deliveries no longer pending, from the consumer's
info, smoothed over a couple of seconds) and admits at most ``rate * max_queue_seconds`` waiting
runs, never fewer than ``floor`` (so an idle runner takes a burst) and never more than
``max_queued_runs``. Past the bound, triggers are answered 429 with Retry-After (a refusal is not
an acknowledgement: the sender retries, nothing accepted is dropped).
"""

from __future__ import annotations

__all__ = ["Backlog"]


class Backlog:
    def __init__(self, *, max_runs: int, max_seconds: float, floor: int, smoothing_seconds: float = 2.0) -> None:
        self.max_runs = max_runs
        self.max_seconds = max_seconds  # 0: only the fixed bound
        self.floor = floor
        self.smoothing_seconds = smoothing_seconds
        self.depth = 0
        self.rate = 0.0  # runs got through per second, smoothed
        self._last: tuple[float, int] | None = None

    def observe(self, now: float, *, depth: int, delivered: int, ack_pending: int) -> None:
        """One reading of the consumer: its waiting + unacknowledged runs, its delivered sequence and
        its unacknowledged count (delivered - unacknowledged = deliveries it got through)."""
        self.depth = depth
        done = delivered - ack_pending
        if self._last is not None:
            then, before = self._last
            elapsed = now - then
            if elapsed > 0 and done >= before:
                instant = (done - before) / elapsed
                weight = min(1.0, elapsed / self.smoothing_seconds)
                self.rate += weight * (instant - self.rate)
        self._last = (now, done)

    @property
    def bound(self) -> int:
        if self.max_seconds <= 0:
            return self.max_runs
        return min(self.max_runs, max(self.floor, int(self.rate * self.max_seconds)))

    def full(self) -> bool:
        return self.depth >= self.bound
