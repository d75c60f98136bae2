"""Keeps the platform's processes running: ``make dev`` restarts a child that died.

:class:`Supervisor` checks PostgreSQL, NATS, the api and the runner; a child found dead is
restarted after a backoff (0.5 s, doubling up to 30 s while it keeps dying within a minute of its
start), with one line when it is found dead and one when it is back:

    make dev: runner exited (code -9); restarting in 0.5 s
    make dev: runner is running again (restart 1)

A restart that fails (a port still busy, a binary that exits at once) counts as another death.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

__all__ = ["Child", "Supervisor"]

MIN_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
STABLE_SECONDS = 60.0


@dataclass
class Child:
    """A supervised process: ``alive()`` says whether it runs (else why not), ``restart()`` starts it."""

    name: str
    alive: Callable[[], str | None]  # None while it runs, else a short reason ("exited (code 1)")
    restart: Callable[[], None]
    backoff: float = MIN_BACKOFF_SECONDS
    started_at: float = field(default_factory=time.monotonic)
    down_since: float | None = None
    retry_at: float = 0.0
    restarts: int = 0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Supervisor:
    def __init__(self, children: list[Child], *, out: TextIO | None = None, prefix: str = "make dev") -> None:
        self.children = children
        self.out = out or sys.stderr
        self.prefix = prefix
        self.lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def _say(self, text: str) -> None:
        print(f"{self.prefix}: {text}", file=self.out, flush=True)

    def check(self) -> None:
        """One pass: notice deaths, restart children whose backoff is over."""
        now = time.monotonic()
        with self.lock:
            for child in self.children:
                if child.down_since is None:
                    reason = child.alive()
                    if reason is None:
                        if now - child.started_at > STABLE_SECONDS:
                            child.backoff = MIN_BACKOFF_SECONDS
                        continue
                    child.down_since = now
                    child.retry_at = now + child.backoff
                    self._say(f"{child.name} {reason}; restarting in {child.backoff:.1f} s")
                    continue
                if now < child.retry_at:
                    continue
                try:
                    child.restart()
                except Exception as exc:
                    child.backoff = min(child.backoff * 2, MAX_BACKOFF_SECONDS)
                    child.retry_at = time.monotonic() + child.backoff
                    first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                    self._say(f"{child.name} did not restart ({first}); trying again in {child.backoff:.1f} s")
                    continue
                child.restarts += 1
                child.down_since = None
                child.started_at = time.monotonic()
                child.backoff = min(child.backoff * 2, MAX_BACKOFF_SECONDS)
                self._say(f"{child.name} is running again (restart {child.restarts})")

    def start(self, interval: float = 0.3) -> None:
        """Check in a background thread every ``interval`` seconds (the tests' platform)."""

        def loop() -> None:
            while not self._stop.wait(interval):
                self.check()

        self._thread = threading.Thread(target=loop, name="konnectz-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
