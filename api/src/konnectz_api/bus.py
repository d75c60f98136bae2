"""The api's NATS connection: connects in the background and keeps retrying, so the api
starts (and reports 503 on /healthz) while NATS is down instead of crashing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext

from konnectz_contracts.events import NATS_REPLICAS
from konnectz_runner import Outage, nats_callbacks
from konnectz_runner.bus import ensure_streams

log = logging.getLogger(__name__)


class Bus:
    def __init__(self, url: str, options: dict[str, Any] | None = None, *, replicas: int = NATS_REPLICAS) -> None:
        """``options``: the api user's credentials (konnectz_contracts.nats_auth.connect_options);
        ``replicas``: of the streams and buckets it makes or updates at start (the setting nats_replicas)."""
        self.url = url
        self.options = options or {}
        self.replicas = replicas
        self.nc: Client | None = None
        self._js: JetStreamContext | None = None
        self.ready = asyncio.Event()
        self.last_error: str | None = "not connected yet"
        self._task: asyncio.Task[None] | None = None
        self.outage = Outage(f"NATS at {url}", log)

    @property
    def connected(self) -> bool:
        return self.nc is not None and self.nc.is_connected

    @property
    def js(self) -> JetStreamContext:
        if self._js is None or not self.connected:
            raise ConnectionError(f"NATS is not reachable at {self.url}: {self.last_error}")
        return self._js

    def _callbacks(self) -> dict[str, Any]:
        """nats_callbacks (one line per change, one per refusal), and /healthz's reason while not
        connected: nats-py retries a refused user forever without raising."""
        callbacks = nats_callbacks(self.outage)
        logged = callbacks["error_cb"]

        async def error_cb(exc: Exception) -> None:
            if not self.connected:
                self.last_error = str(exc) or type(exc).__name__
            await logged(exc)

        callbacks["error_cb"] = error_cb
        return callbacks

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
                    **self.options,
                    **self._callbacks(),
                )
                js = nc.jetstream()
                await ensure_streams(js, self.replicas)
            except Exception as exc:  # keep trying until NATS is reachable
                self.last_error = str(exc) or type(exc).__name__
                self.outage.failed(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            self.nc, self._js = nc, js
            self.last_error = None
            self.outage.ok()
            self.ready.set()
            return

    async def close(self, within: float = 5.0) -> None:
        """Drain (pending acks and publishes go out) for at most ``within`` seconds, then close."""
        if self._task is not None:
            self._task.cancel()
        self.outage.closing = True
        if self.nc is not None:
            try:
                if self.nc.is_connected:
                    # nats-py's own drain timeout ends it cleanly; cancelling its drain from outside
                    # leaves a gathered future whose CancelledError is printed as never retrieved.
                    self.nc.options["drain_timeout"] = max(within - 1.0, 0.5)
                    await asyncio.wait_for(self.nc.drain(), within)
                else:
                    await self.nc.close()
            except Exception:
                log.info("NATS drain did not finish within %.0f s; closing", within)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.nc.close(), 2.0)
