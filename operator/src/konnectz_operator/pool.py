"""The shared runner pool: where Konnects of ``runnerMode: shared`` run.

A pool Konnect gets no workload of its own. The operator puts its flow into the ``KZ_KONNECTS``
bucket of NATS (key ``konnect.<id>``, the compiled FlowSpec JSON, as ``make dev`` does), and
the pool's runners (one Deployment of the chart, ``KONNECTZ_POOL=true``) watch that bucket:
they serve its webhook and form, tick its schedule and poll its source, and consume only the
runs under ``kz.runs.pool.>``. Its Ingress, when there is one, routes to the pool's Service.
A paused or deleted pool Konnect is taken out of the bucket; :func:`sweep` removes entries
whose Konnect is gone (deleted while the operator was down).

Kopf runs the handlers on threads; the NATS client lives on Kopf's event loop, and
:meth:`RunnerPool.call` hands coroutines over to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

import nats
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, BucketNotFoundError, KeyNotFoundError, NoKeysError
from nats.js.kv import KeyValue

from konnectz_contracts.events import KV_KONNECTS, NATS_REPLICAS, konnect_key

__all__ = ["PoolError", "RunnerPool", "is_shared"]

log = logging.getLogger(__name__)

T = TypeVar("T")
CALL_TIMEOUT_SECONDS = 15.0
_STREAM_NAME_IN_USE = 10058  # JetStream API error code


async def konnects_bucket(js: JetStreamContext, replicas: int = NATS_REPLICAS) -> KeyValue:
    """The ``KZ_KONNECTS`` bucket, created when missing with the configuration the runner and the api
    give it (one history entry, file storage, ``replicas`` servers: the setting nats_replicas), or brought
    to ``replicas``. The other streams and buckets are theirs: they create them at start
    (``konnectz_runner.ensure_streams``); the operator writes only this bucket."""
    try:
        kv = await js.key_value(KV_KONNECTS)
    except BucketNotFoundError:
        pass
    else:
        stream = (await js.stream_info(f"KV_{KV_KONNECTS}")).config
        if stream.num_replicas != replicas:
            log.info("Bucket %s: replicas %s -> %s", KV_KONNECTS, stream.num_replicas, replicas)
            stream.num_replicas = replicas
            await js.update_stream(stream)
        return kv
    try:
        config = KeyValueConfig(bucket=KV_KONNECTS, history=1, storage=StorageType.FILE, replicas=replicas)
        return await js.create_key_value(config)
    except BadRequestError as exc:
        if exc.err_code != _STREAM_NAME_IN_USE:  # another process created it meanwhile
            raise
    return await js.key_value(KV_KONNECTS)


class PoolError(Exception):
    """The pool's NATS bucket could not be reached (retried)."""


def is_shared(spec: Any) -> bool:
    return bool(spec) and spec.get("runnerMode") == "shared"


class RunnerPool:
    def __init__(self, nats_url: str, options: dict[str, Any] | None = None, *, replicas: int = NATS_REPLICAS) -> None:
        """``options``: the operator user's credentials (konnectz_contracts.nats_auth.connect_options);
        ``replicas``: of the KZ_KONNECTS bucket (the setting nats_replicas)."""
        self.nats_url = nats_url
        self.options = options or {}
        self.replicas = replicas
        self._errors: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nc: NATS | None = None
        self._kv: KeyValue | None = None
        self._lock: asyncio.Lock | None = None

    async def _error(self, exc: Exception) -> None:
        """One line per distinct error (a refused user or subject, an unreachable NATS), not nats-py's
        traceback per reconnect attempt."""
        text = str(exc) or type(exc).__name__
        if text not in self._errors and len(self._errors) < 100:
            self._errors.add(text)
            log.error("Shared runner pool: NATS at %s: %s", self.nats_url, text)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = asyncio.Lock()

    async def _bucket(self) -> KeyValue:
        assert self._lock is not None, "RunnerPool.bind() was not called"
        async with self._lock:
            if self._kv is None:
                self._nc = await nats.connect(
                    self.nats_url,
                    name="konnectz-operator",
                    connect_timeout=3,
                    reconnect_time_wait=1,
                    max_reconnect_attempts=-1,
                    allow_reconnect=True,
                    error_cb=self._error,
                    **self.options,
                )
                self._kv = await konnects_bucket(self._nc.jetstream(), self.replicas)
                log.info("Shared runner pool: connected to %s", self.nats_url)
            return self._kv

    async def publish(self, konnect_id: int, flow_json: str) -> bool:
        """Put the flow in the bucket; False when it was there already, unchanged."""
        kv = await self._bucket()
        data = flow_json.encode()
        try:
            if (await kv.get(konnect_key(konnect_id))).value == data:
                return False
        except KeyNotFoundError:
            pass
        await kv.put(konnect_key(konnect_id), data)
        return True

    async def withdraw(self, konnect_id: int) -> bool:
        """Take the flow out of the bucket; False when it was not there."""
        kv = await self._bucket()
        try:
            await kv.get(konnect_key(konnect_id))
        except KeyNotFoundError:
            return False
        await kv.delete(konnect_key(konnect_id))
        return True

    async def hosted(self) -> set[int]:
        kv = await self._bucket()
        try:
            keys = await kv.keys()
        except NoKeysError:
            return set()
        return {int(key.split(".", 1)[1]) for key in keys if key.startswith("konnect.") and key[8:].isdigit()}

    async def sweep(self, wanted: Iterable[int]) -> list[int]:
        """Withdraw every hosted flow whose Konnect is no longer wanted in the pool."""
        stale = sorted((await self.hosted()) - set(wanted))
        for konnect_id in stale:
            await self.withdraw(konnect_id)
        return stale

    def call(self, coro: Awaitable[T], timeout: float = CALL_TIMEOUT_SECONDS) -> T:
        """Run ``coro`` on Kopf's loop from a handler thread and wait for its result."""
        if self._loop is None:
            raise RuntimeError("the shared runner pool is not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)  # type: ignore[arg-type]

    async def close(self) -> None:
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.close()
