"""Nothing blocks the event loop: the guard on the synchronous database engine.

The api serves every request of a process on one event loop. A synchronous database call made on
that loop (from an ``async def`` route, dependency, service or background task) stops every other
request of the process until it returns, and when it waits for a row lock held by a request that
needs the loop to finish, it never returns (issue 32: the whole api froze).

The synchronous session belongs to the thread pool: ``def`` routes (FastAPI runs them there) and
``await run_in_threadpool(...)`` / :func:`konnectz_api.db.in_thread` from async code. This guard
watches every statement and commit of the synchronous engine and, when one runs on a
thread running the api's event loop (:func:`watch`), acts by ``KONNECTZ_LOOP_GUARD``:

- ``log`` (the default): one warning per call site (file and line of the first api frame), with
  the stack, so a regression is seen in production logs without flooding them;
- ``raise``: the call is refused with :class:`BlockingOnLoop` before it reaches the database, and
  recorded in :data:`VIOLATIONS` (the api's test suite runs with it: a fixture fails the test that
  caused one, whatever the route answered);
- ``off``: nothing is checked.

The async read pool (psycopg's ``AsyncConnectionPool``) is made for the loop and is not guarded.
"""

from __future__ import annotations

import asyncio
import logging
import sysconfig
import threading
import traceback
import weakref
from typing import Any, Literal

from sqlalchemy import Engine, event

__all__ = ["VIOLATIONS", "BlockingOnLoop", "Mode", "guard_engine", "on_event_loop", "watch"]

Mode = Literal["off", "log", "raise"]
log = logging.getLogger(__name__)

#: What ``raise`` mode refused, newest last: (the operation, the stack where it was called).
VIOLATIONS: list[tuple[str, str]] = []
_seen_sites: set[str] = set()
_lock = threading.Lock()


class BlockingOnLoop(RuntimeError):
    """A synchronous database call was made on the event loop's thread."""


_watched: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def watch(loop: asyncio.AbstractEventLoop) -> None:
    """Guard ``loop``: the api's lifespan registers the loop that serves its requests (a loop of
    someone else's, such as a test's own, may block as it likes)."""
    _watched.add(loop)


def on_event_loop() -> bool:
    """Whether the calling thread is running a watched event loop right now."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return loop in _watched


_LIBRARIES = (sysconfig.get_paths()["stdlib"], "site-packages", "dist-packages", __file__)


def _site(stack: list[traceback.FrameSummary]) -> str:
    """The innermost frame of our own code (the call site to fix), else the innermost frame."""
    for frame in reversed(stack):
        if not any(part in frame.filename for part in _LIBRARIES):
            return f"{frame.filename}:{frame.lineno} ({frame.name})"
    return f"{stack[-1].filename}:{stack[-1].lineno}" if stack else "?"


def _check(mode: Mode, operation: str) -> None:
    if not on_event_loop():
        return
    stack = traceback.extract_stack()[:-2]
    site = _site(stack)
    text = "".join(traceback.format_list(stack[-25:]))
    if mode == "raise":
        with _lock:
            VIOLATIONS.append((f"{operation} at {site}", text))
        raise BlockingOnLoop(f"synchronous database {operation} on the event loop at {site}")
    with _lock:
        first = site not in _seen_sites
        _seen_sites.add(site)
    if first:
        log.warning(
            "synchronous database %s on the event loop at %s: it blocks every request\n%s", operation, site, text
        )


def guard_engine(engine: Engine, mode: Mode) -> Engine:
    """Install the guard on ``engine`` (``mode``: the setting ``loop_guard``)."""
    if mode == "off":
        return engine
    guarded = mode

    def before_execute(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        _check(guarded, "statement " + " ".join(statement.split()[:3]))

    def before_commit(conn: Any) -> None:
        _check(guarded, "commit")

    event.listen(engine, "before_cursor_execute", before_execute)
    event.listen(engine, "commit", before_commit)
    return engine
