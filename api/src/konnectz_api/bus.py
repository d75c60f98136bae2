"""The api's NATS connection: connects in the background and keeps retrying, so the api
starts (and reports 503 on /healthz) while NATS is down instead of crashing."""

from __future__ import annotations

import asyncio
import logging

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext

from konnectz_runner.events import ensure_streams

log = logging.getLogger(__name__)


class Bus:
    def __init__(self, url: str) -> None:
        self.url = url
        self.nc: Client | None = None
        self._js: JetStreamContext | None = None
        self.ready = asyncio.Event()
        self.last_error: str | None = "not connected yet"
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        return self.nc is not None and self.nc.is_connected

    @property
    def js(self) -> JetStreamContext:
        if self._js is None or not self.connected:
            raise ConnectionError(f"NATS is not reachable at {self.url}: {self.last_error}")
        return self._js

    def start(self) -> None:
        self._task = asyncio.create_task(self._connect_loop())

    async def _connect_loop(self) -> None:
        delay = 0.2
        while True:
            try:
                nc = await nats.connect(
                    self.url,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=1,
                    connect_timeout=2,
                    allow_reconnect=True,
                )
                js = nc.jetstream()
                await ensure_streams(js)
            except Exception as exc:  # keep trying until NATS is reachable
                self.last_error = str(exc) or type(exc).__name__
                log.warning("NATS at %s not reachable yet: %s", self.url, self.last_error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self.nc, self._js = nc, js
            self.last_error = None
            self.ready.set()
            return

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self.nc is not None:
            try:
                if self.nc.is_connected:
                    await self.nc.drain()
                else:
                    await self.nc.close()
            except Exception:  # noqa: S110 - closing anyway
                pass
