"""How the runner connects: to NATS (:func:`connect_nats`) and outward (:func:`outbound_transport`,
the guarded transport of the steps' HTTP client). The runner process (:mod:`konnectz_runner.server`),
the worker thread (:mod:`konnectz_runner.worker`) and ``tick`` (:mod:`konnectz_runner.cli`) all use it.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import nats
from nats.aio.client import Client as NATS

from konnectz_contracts.errors import ConfigError
from konnectz_runner.aiohttp_transport import AiohttpTransport
from konnectz_runner.netguard import NetGuard, guarded_transport

__all__ = ["CONNECT_DEADLINE_SECONDS", "USER_AGENT", "connect_nats", "outbound_transport"]

log = logging.getLogger(__name__)

USER_AGENT = "Konnectz-Runner/0.1"
CONNECT_DEADLINE_SECONDS = 30.0


async def connect_nats(url: str, *, deadline: float = CONNECT_DEADLINE_SECONDS, **callbacks: object) -> NATS:
    """Connect, retrying for ``deadline`` seconds (NATS may start after us); reconnect forever afterwards."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline
    failed_before = False
    while True:
        try:
            return await nats.connect(
                url,
                name="konnectz-runner",
                connect_timeout=2,
                reconnect_time_wait=1,
                max_reconnect_attempts=-1,
                **callbacks,
            )
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
    (:class:`~konnectz_runner.aiohttp_transport.AiohttpTransport`) or ``"httpx"`` (:func:`guarded_transport`)."""
    if kind == "aiohttp":
        return AiohttpTransport(guard, max_connections=max_connections)
    # httpcore scans every pooled connection on each request: a small pool is faster than a large one.
    return guarded_transport(guard, limits=httpx.Limits(max_connections=16, max_keepalive_connections=16))
