"""How the runner connects: to NATS (:func:`connect_nats`) and outward (:func:`outbound_transport`,
the guarded transport of the steps' HTTP client). The runner process (:mod:`konnectz_runner.ingress.server`),
the worker thread (:mod:`konnectz_runner.work.worker`) and ``tick`` (:mod:`konnectz_runner.cli`) all use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import httpx
import nats
from nats.aio.client import Client as NATS

from konnectz_contracts.errors import ConfigError
from konnectz_contracts.nats_auth import connect_options
from konnectz_runner.apps import AiohttpTransport, NetGuard, guarded_transport

if TYPE_CHECKING:
    from konnectz_runner.config import Settings

__all__ = ["CONNECT_DEADLINE_SECONDS", "USER_AGENT", "connect_nats", "outbound_transport"]

log = logging.getLogger(__name__)

USER_AGENT = "Konnectz-Runner/0.1"
CONNECT_DEADLINE_SECONDS = 30.0


def refused(exc: BaseException) -> bool:
    """NATS refused the credentials (wrong user or password, or none): retrying does not help."""
    return "authorization violation" in str(exc).lower()


async def connect_nats(settings: Settings, *, deadline: float = CONNECT_DEADLINE_SECONDS, **callbacks: object) -> NATS:
    """Connect as the runner's NATS user (``settings.nats_user``), retrying for ``deadline`` seconds
    (NATS may start after us); reconnect forever afterwards. Refused credentials end it at once, with
    one line (:class:`ConfigError`)."""
    url = settings.nats_url
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline
    failed_before = False
    given_error_cb = callbacks.pop("error_cb", None)
    refusal: asyncio.Future[BaseException] = loop.create_future()

    async def error_cb(exc: Exception) -> None:
        # nats-py retries refused credentials forever (max_reconnect_attempts=-1): while connecting,
        # a refusal ends the attempt; once connected, the caller's callback sees it.
        if refused(exc) and not refusal.done() and not connected:
            refusal.set_result(exc)
        elif given_error_cb is not None:
            await given_error_cb(exc)  # type: ignore[operator]
        else:  # nats-py's default prints a traceback per failed attempt
            log.debug("NATS: %s", exc)

    connected = False
    while True:
        attempt: asyncio.Future[NATS] = asyncio.ensure_future(
            nats.connect(
                url,
                name="konnectz-runner",
                connect_timeout=2,
                reconnect_time_wait=1,
                max_reconnect_attempts=-1,
                error_cb=error_cb,
                **connect_options(settings.nats_user, settings.nats_password, settings.nats_ca_file),
                **callbacks,
            )
        )
        waiting: set[asyncio.Future[Any]] = {attempt, refusal}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if refusal.done():
            attempt.cancel()
            with contextlib.suppress(BaseException):
                await attempt
            who = f"user {settings.nats_user!r}" if settings.nats_user else "a client without credentials"
            raise ConfigError(
                f"NATS at {url} refused {who} (Authorization Violation): check KONNECTZ_NATS_USER and "
                "KONNECTZ_NATS_PASSWORD"
            )
        try:
            nc = attempt.result()
            connected = True
            return nc
        except Exception as exc:
            if loop.time() >= give_up:
                raise ConfigError(f"Cannot connect to NATS at {url}: {exc or type(exc).__name__}") from exc
            if not failed_before:  # one line, not one per attempt
                log.warning("NATS at %s not reachable yet (%s); retrying", url, exc or type(exc).__name__)
            failed_before = True
            await asyncio.sleep(1.0)


def outbound_transport(
    guard: NetGuard, kind: str = "aiohttp", *, max_connections: int = 64
) -> httpx.AsyncBaseTransport:
    """The guarded transport of the steps' HTTP client: ``"aiohttp"``
    (:class:`~konnectz_runner.apps.aiohttp_transport.AiohttpTransport`) or ``"httpx"`` (:func:`guarded_transport`)."""
    if kind == "aiohttp":
        return AiohttpTransport(guard, max_connections=max_connections)
    # httpcore scans every pooled connection on each request: a small pool is faster than a large one.
    return guarded_transport(guard, limits=httpx.Limits(max_connections=16, max_keepalive_connections=16))
