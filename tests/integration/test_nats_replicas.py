"""Replicas that are real: on a three-server JetStream cluster, the api's, the runner's and the operator's
start-up code (with ``nats_replicas=3``, the chart's ``nats.replicas``) leave every KZ_* stream and KV bucket
on three servers, and raise streams and buckets made with one copy (an install grown from one NATS server to
three) to three. Each component connects as its own NATS user, so the grants to update streams are checked too.

The cluster is three nats-server processes with routes on loopback (``konnectz_devstack._nats.NatsCluster``,
the devstack's binary); the chart's cluster configuration is the same but for the addresses.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import nats
import pytest
from nats.js.api import KeyValueConfig, StorageType

from konnectz_api.bus import Bus
from konnectz_contracts import events as contract_events
from konnectz_contracts.events import KV_KONNECTS, STREAM_RUNS, RunRequest
from konnectz_contracts.nats_auth import API, OPERATOR, RUNNER, connect_options
from konnectz_devstack._nats import NatsCluster
from konnectz_operator.pool import konnects_bucket
from konnectz_runner.bus import ensure_streams, publish_run, stream_configs
from konnectz_runner.config import Settings as RunnerSettings
from konnectz_runner.ingress.server import Runner

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("nats-cluster")]

#: Every stream and bucket the platform makes (konnectz_contracts.nats_auth lists them for the grants).
STREAMS = {"KZ_RUNS", "KZ_EVENTS", "KZ_CAPTURES"}
BUCKETS = {
    "KZ_KONNECTS", "KZ_SCHEDULES", "KZ_POLLS", "KZ_STEPS", "KZ_IDEMPOTENCY", "KZ_QUOTA_BLOCKS", "KZ_BUDGETS",
    "KZ_ACTIVE", "KZ_CANCELS", "KZ_CAPTURING", "KZ_SLOTS", "KZ_LEADERS", "KZ_WAITS", "KZ_REVISIONS",
}  # fmt: skip


@pytest.fixture(scope="module")
def cluster() -> Iterator[NatsCluster]:
    base = Path(tempfile.mkdtemp(prefix="konnectz-nats-cluster-"))
    running = NatsCluster(base, size=3)
    try:
        running.start()
        yield running
    finally:
        running.stop()
        shutil.rmtree(base, ignore_errors=True)


async def _replicas(admin: nats.NATS) -> dict[str, int]:
    """Every stream on the cluster by name, with its configured num_replicas."""
    js = admin.jetstream(timeout=20)
    found: dict[str, int] = {}
    for info in await js.streams_info():
        found[info.config.name] = info.config.num_replicas
    return found


async def _until(check, within: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await check():
        if loop.time() > deadline:
            raise AssertionError("not within time")
        await asyncio.sleep(0.2)


async def test_every_stream_and_bucket_is_kept_on_the_configured_servers(cluster, monkeypatch, tmp_path):
    admin = await nats.connect(cluster.admin_url, connect_timeout=5)
    try:
        js = admin.jetstream(timeout=20)  # a stream on three servers, made on a loaded machine
        # A single-server install grown to three: KZ_RUNS and KZ_KONNECTS exist with one copy.
        await js.add_stream(stream_configs(1)[0])
        await js.create_key_value(KeyValueConfig(bucket=KV_KONNECTS, history=1, storage=StorageType.FILE))
        before = await _replicas(admin)
        assert before == {STREAM_RUNS: 1, f"KV_{KV_KONNECTS}": 1}

        # The api's start-up (its NATS connection ensures every stream and bucket).
        bus = Bus(cluster.url, connect_options(API, cluster.passwords[API]), replicas=3)
        bus.start()
        try:
            await asyncio.wait_for(bus.ready.wait(), 60)
        finally:
            await bus.close()
        # The operator's: the KZ_KONNECTS bucket it writes the shared pool's flows to.
        operator = await nats.connect(
            cluster.url, connect_timeout=5, **connect_options(OPERATOR, cluster.passwords[OPERATOR])
        )
        try:
            await konnects_bucket(operator.jetstream(), 3)
        finally:
            await operator.close()
        # The shared pool runner's (it also makes KZ_SLOTS, and KZ_LEADERS for its election).
        monkeypatch.setattr(contract_events, "_runs_prefix", contract_events._runs_prefix)  # the pool's subjects
        runner = Runner(
            RunnerSettings(
                **cluster.settings(RUNNER), nats_replicas=3, pool=True, enforce_quota=False, runner_port=0,
            )
        )  # fmt: skip
        await runner.start()
        try:
            wanted = {*STREAMS, *(f"KV_{bucket}" for bucket in BUCKETS)}
            await _until(lambda: _has(admin, wanted))
        finally:
            await runner.stop()

        after = await _replicas(admin)
        kz = {name: replicas for name, replicas in after.items() if name.startswith(("KZ_", "KV_KZ_"))}
        assert kz == dict.fromkeys(wanted, 3)
        # And JetStream placed them: each stream has a leader and two current replicas.
        for name in (STREAM_RUNS, f"KV_{KV_KONNECTS}", "KZ_EVENTS"):
            info = await js.stream_info(name)
            assert info.cluster is not None and info.cluster.leader, name
            assert len(info.cluster.replicas or []) == 2, (name, info.cluster)
    finally:
        await admin.close()


async def _has(admin: nats.NATS, names: set[str]) -> bool:
    return names <= set(await _replicas(admin))


async def test_a_replica_count_the_cluster_cannot_hold_stops_the_start_saying_so(cluster):
    """Five replicas on three servers: the stream is not silently kept on fewer."""
    runner = await nats.connect(cluster.url, connect_timeout=5, **connect_options(RUNNER, cluster.passwords[RUNNER]))
    try:
        with pytest.raises(Exception) as raised:
            await ensure_streams(runner.jetstream(), 5)
        assert "replicas" in str(raised.value).lower() or "insufficient" in str(raised.value).lower(), raised.value
    finally:
        await runner.close()


async def test_a_lost_server_keeps_every_acknowledged_run_and_writes_resume(cluster):
    """What a lost NATS node costs with three replicas: nothing acknowledged, and a pause of the writes to the
    streams it led while the other two elect a new leader (printed: the chart's README quotes it)."""
    runner = await nats.connect(
        cluster.url, connect_timeout=5, max_reconnect_attempts=-1, reconnect_time_wait=0.2,
        **connect_options(RUNNER, cluster.passwords[RUNNER]),
    )  # fmt: skip
    admin = await nats.connect(cluster.admin_url, connect_timeout=5)
    index: int | None = None
    try:
        js = runner.jetstream(timeout=20)
        await ensure_streams(js, 3)
        start = (await js.stream_info(STREAM_RUNS)).state.messages
        acked = 0
        for n in range(50):
            await publish_run(js, _run(f"before-{n}"))
            acked += 1
        kv = await js.key_value(KV_KONNECTS)
        # The server leading KZ_RUNS goes (the worst case: a leader, not a follower).
        leader = (await admin.jetstream().stream_info(STREAM_RUNS)).cluster.leader
        index = int(leader.removeprefix("kz-n"))
        cluster.stop_server(index)
        loop = asyncio.get_running_loop()
        lost_at = loop.time()
        while True:
            try:
                await publish_run(js, _run("after"), ack_timeout=2)
                break
            except Exception:
                assert loop.time() - lost_at < 60, "writes did not resume within 60 s"
                await asyncio.sleep(0.1)
        paused = loop.time() - lost_at
        info = await js.stream_info(STREAM_RUNS)
        assert info.state.messages == start + acked + 1  # every acknowledged run, and the new one
        assert info.cluster.leader != leader
        assert kv is not None
        print(f"\nlost the KZ_RUNS leader {leader}: writes resumed after {paused:.1f} s, {acked} acknowledged kept")
    finally:
        await admin.close()
        await runner.close()
        if index is not None:
            cluster.start_server(index)


def _run(run_id: str) -> RunRequest:
    return RunRequest(run_id=run_id, konnect_id=7, trigger_output={}, received_at=datetime.now(UTC))
