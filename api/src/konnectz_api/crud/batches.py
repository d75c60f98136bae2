"""Work done in batches until there is none left (the retention purges)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["drain"]


def drain(batch: Callable[[], tuple[int, bool]], *, pause: float = 0.0) -> int:
    """Run ``batch`` (returning how many rows it did and whether it was the last) until it is done;
    the total. With ``pause``, sleep ``pause`` times as long as each batch took before the next one,
    so catching up on a large table does not take the requests' CPU."""
    total = 0
    while True:
        started = time.monotonic()
        done_rows, last = batch()
        total += done_rows
        if last:
            return total
        if pause:
            time.sleep(pause * (time.monotonic() - started))
