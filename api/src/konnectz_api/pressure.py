"""Back-pressure for the api: a deadline on every reply, and a bound on one account's writes at once.

- :class:`DeadlineMiddleware`: a request whose reply has not started within
  ``KONNECTZ_REQUEST_DEADLINE_SECONDS`` is answered 503 with ``Retry-After``, logged once (method,
  path, deadline). The work still running is cancelled; a synchronous route's thread cannot be
  interrupted, but its database waits are bounded by PostgreSQL's timeouts
  (:func:`konnectz_api.db.server_options`), so it ends soon after, and whatever it answers is dropped.
  The deadline is above Test & Review's own limit (the settings refuse one that is not).
- :class:`AccountWritesMiddleware`: at most ``KONNECTZ_ACCOUNT_CONCURRENT_WRITES`` write calls
  (POST, PUT, PATCH, DELETE under ``/api/``) of one signed-in user run at once in one api process;
  one more is answered 429 with ``Retry-After: 1`` before it reaches a route, the database or the
  thread pool. So a script that floods one account gets 429s for that account, while the thread
  pool and the database connections stay free for every other account. The user is read from the
  bearer token's signature only (no database); a request without a valid token is not counted here
  (the route answers its 401).

The hot read routes (:mod:`konnectz_api.fastreads`) are in front of both: each is a query or two on
the async read pool, bounded by the pool's timeout and ``statement_timeout``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from konnectz_api.core.security import decode_access_claims

__all__ = ["DEADLINE_RETRY_AFTER_SECONDS", "AccountWritesMiddleware", "DeadlineMiddleware"]

log = logging.getLogger(__name__)
DEADLINE_RETRY_AFTER_SECONDS = 5
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


async def _reply(send: Send, status: int, message: str, retry_after: int) -> None:
    body = orjson.dumps({"message": message})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry_after).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class DeadlineMiddleware:
    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        expired = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if expired:  # the client has its 503: what the late work answers is dropped
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        work = asyncio.ensure_future(self.app(scope, receive, guarded_send))
        done, _ = await asyncio.wait({work}, timeout=self.seconds)
        if work in done or started:
            await work  # its result, or its exception for the error middleware
            return
        expired = True
        work.cancel()
        work.add_done_callback(_retrieve)
        log.warning(
            "%s %s: no reply within the request deadline (%g s): answered 503",
            scope.get("method"),
            scope.get("path"),
            self.seconds,
        )
        await _reply(
            send,
            503,
            f"The server could not answer within {self.seconds:g} s. Please try again shortly.",
            DEADLINE_RETRY_AFTER_SECONDS,
        )


def _retrieve(task: asyncio.Future[None]) -> None:
    """The abandoned work's outcome, read so that asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token else None
    return None


class AccountWritesMiddleware:
    def __init__(self, app: ASGIApp, limit: int, secret: str) -> None:
        self.app = app
        self.limit = limit
        self.secret = secret
        self.running: Counter[int] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") not in WRITES
            or not scope.get("path", "").startswith("/api/")
        ):
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        claims = decode_access_claims(token, secret=self.secret) if token else None
        if claims is None:
            await self.app(scope, receive, send)
            return
        user = claims.user_id
        if self.running[user] >= self.limit:
            log.warning(
                "%s %s: user %s has %d write calls running (the limit): answered 429",
                scope.get("method"),
                scope.get("path"),
                user,
                self.running[user],
            )
            await _reply(
                send,
                429,
                f"Too many changes at once from this account (at most {self.limit} at a time). "
                "Please wait for the earlier ones to finish.",
                1,
            )
            return
        self.running[user] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running[user] -= 1
            if self.running[user] <= 0:
                del self.running[user]
