"""The shared pool's bucket: the operator creates KZ_KONNECTS itself (it no longer runs the runner's
ensure_streams) with the configuration the runner gives it, and writes flows into it."""

from __future__ import annotations

import asyncio

import nats

from konnectz_contracts.events import KV_KONNECTS, konnect_key
from konnectz_contracts.nats_auth import OPERATOR, connect_options
from konnectz_operator.pool import RunnerPool, konnects_bucket


def test_the_pool_creates_its_bucket_and_publishes_and_withdraws_flows(nats_server) -> None:
    async def scenario() -> None:
        pool = RunnerPool(nats_server.url, connect_options(OPERATOR, nats_server.passwords[OPERATOR]))
        pool.bind(asyncio.get_running_loop())
        assert await pool.publish(42, '{"konnect_id": 42}') is True
        assert await pool.publish(42, '{"konnect_id": 42}') is False  # unchanged
        assert 42 in await pool.hosted()
        nc = await nats.connect(nats_server.admin_url)
        try:
            js = nc.jetstream()
            status = await (await js.key_value(KV_KONNECTS)).status()
            assert status.history == 1
            assert (await (await konnects_bucket(js)).get(konnect_key(42))).value == b'{"konnect_id": 42}'
        finally:
            await nc.drain()
        assert await pool.withdraw(42) is True
        assert await pool.withdraw(42) is False
        await pool.close()

    asyncio.run(scenario())
