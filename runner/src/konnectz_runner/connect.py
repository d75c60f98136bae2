"""How the runner connects: to NATS (:func:`connect_nats`) and outward (:func:`outbound_transport`,
the guarded transport of the steps' HTTP client). The runner process (:mod:`konnectz_runner.server`),
the worker thread (:mod:`konnectz_runner.worker`) and ``tick`` (:mod:`konnectz_runner.cli`) all use it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import httpx
import nats
from nats.aio.client import Client as NATS

from konnectz_contracts.errors import ConfigError
from konnectz_contracts.nats_auth import connect_options
from konnectz_runner.aiohttp_transport import AiohttpTransport
from konnectz_runner.netguard import NetGuard, guarded_transport

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
    options: dict[str, object] = {"error_cb": _quiet_error, **callbacks}
    while True:
        try:
            return await nats.connect(
                url,
                name="konnectz-runner",
                connect_timeout=2,
                reconnect_time_wait=1,
                max_reconnect_attempts=-1,
                **connect_options(settings.nats_user, settings.nats_password, settings.nats_ca_file),
                **options,  # type: ignore[arg-type]
            )
        except Exception as exc:
            if refused(exc):
                who = f"user {settings.nats_user!r}" if settings.nats_user else "a client without credentials"
                raise ConfigError(
                    f"NATS at {url} refused {who} (Authorization Violation): check KONNECTZ_NATS_USER and "
                    "KONNECTZ_NATS_PASSWORD"
                ) from None
            if loop.time() >= give_up:
                raise ConfigError(f"Cannot connect to NATS at {url}: {exc or type(exc).__name__}") from exc
            if not failed_before:  # one line, not one per attempt
                log.warning("NATS at %s not reachable yet (%s); retrying", url, exc or type(exc).__name__)
            failed_before = True
            await asyncio.sleep(1.0)


async def _quiet_error(exc: Exception) -> None:
    """nats-py's default prints a traceback per failed attempt; connect_nats logs the failure itself."""
    log.debug("NATS: %s", exc)


def outbound_transport(
    guard: NetGuard, kind: str = "aiohttp", *, max_connections: int = 64
) -> httpx.AsyncBaseTransport:
    """The guarded transport of the steps' HTTP client: ``"aiohttp"``
    (:class:`~konnectz_runner.aiohttp_transport.AiohttpTransport`) or ``"httpx"`` (:func:`guarded_transport`)."""
    if kind == "aiohttp":
        return AiohttpTransport(guard, max_connections=max_connections)
    # httpcore scans every pooled connection on each request: a small pool is faster than a large one.
    return guarded_transport(guard, limits=httpx.Limits(max_connections=16, max_keepalive_connections=16))
