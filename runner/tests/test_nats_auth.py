"""NATS users (konnectz_contracts.nats_auth): nothing anonymous; each component stays within its subjects.

The suites exercise the grants (every test NATS fails its session when it refused a component);
these tests check the refusals, on a NATS of their own.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from nats.errors import Error as NatsError

from konnectz_contracts.budgets import KV_BUDGETS
from konnectz_contracts.capture import KV_CAPTURING, STREAM_CAPTURES
from konnectz_contracts.errors import ConfigError
from konnectz_contracts.events import (
    EVENTS_CONSUMER,
    KV_IDEMPOTENCY,
    KV_KONNECTS,
    KV_LEADERS,
    KV_POLLS,
    KV_SCHEDULES,
    KV_STEPS,
    STREAM_EVENTS,
    STREAM_RUNS,
    konnect_key,
)
from konnectz_contracts.nats_auth import (
    ADMIN,
    API,
    COMPONENTS,
    ENSURED_BUCKETS,
    ENSURED_STREAMS,
    OPERATOR,
    RUNNER,
    authorization_conf,
    connect_options,
    grants,
)
from konnectz_contracts.quota import KV_QUOTA_BLOCKS, QUOTA_SUBJECT
from konnectz_contracts.run_control import KV_ACTIVE, KV_CANCELS, KV_SLOTS
from konnectz_contracts.waits import KV_REVISIONS, KV_WAITS
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port
from konnectz_runner import Outage, nats_callbacks
from konnectz_runner.bus import connect_nats, ensure_streams
from konnectz_runner.config import Settings

CHART_FILE = Path(__file__).resolve().parents[2] / "charts" / "konnectz" / "files" / "nats-authorization.conf"


def test_the_chart_grants_what_nats_auth_grants() -> None:
    """One source: the chart's users and permissions are the module's (``make nats-auth`` writes them)."""
    assert CHART_FILE.read_text() == authorization_conf(COMPONENTS), "stale: run `make nats-auth`"
    assert ADMIN not in CHART_FILE.read_text().split("user:")[1:]  # the test user is the devstack's only


def test_the_grants_name_every_stream_and_bucket_the_platform_creates() -> None:
    assert set(ENSURED_STREAMS) == {STREAM_RUNS, STREAM_EVENTS, STREAM_CAPTURES}
    assert set(ENSURED_BUCKETS) == {
        KV_KONNECTS,
        KV_SCHEDULES,
        KV_POLLS,
        KV_STEPS,
        KV_IDEMPOTENCY,
        KV_QUOTA_BLOCKS,
        KV_BUDGETS,
        KV_ACTIVE,
        KV_CANCELS,
        KV_CAPTURING,
        KV_WAITS,
        KV_REVISIONS,
    }
    assert {KV_SLOTS, KV_LEADERS} <= set(grants()[RUNNER].manage_buckets)
    assert grants()[OPERATOR].write_buckets == (KV_KONNECTS,)


@pytest.fixture(scope="module")
def own() -> Iterator[NatsServer]:
    server = NatsServer(Path(tempfile.mkdtemp(prefix="konnectz-nats-auth-")), free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def admin(own: NatsServer) -> AsyncIterator[nats.NATS]:
    client = await nats.connect(own.admin_url)
    await ensure_streams(client.jetstream())
    try:
        yield client
    finally:
        await client.drain()


async def _as(own: NatsServer, user: str, errors: list[Exception] | None = None) -> nats.NATS:
    async def collect(exc: Exception) -> None:
        if errors is not None:
            errors.append(exc)

    return await nats.connect(own.url, error_cb=collect, **connect_options(user, own.passwords[user]))


async def _refused_publish(own: NatsServer, user: str, subject: str) -> None:
    errors: list[Exception] = []
    client = await _as(own, user, errors)
    try:
        await client.publish(subject, b"{}")
        await client.flush()
        for _ in range(50):
            if errors:
                break
            await asyncio.sleep(0.02)
        assert any("permissions violation" in str(e).lower() for e in errors), errors
    finally:
        await client.close()


async def _refused_api(own: NatsServer, user: str, call: str, *args: object) -> None:
    client = await _as(own, user)
    try:
        with pytest.raises((TimeoutError, NatsError)):  # NATS drops a refused request: no reply
            await getattr(client.jetstream(timeout=0.5), call)(*args)
    finally:
        await client.close()


async def test_an_anonymous_client_or_a_wrong_password_is_refused(own: NatsServer) -> None:
    for options in ({}, {"user": RUNNER, "password": "wrong"}):
        with pytest.raises(NatsError, match="Authorization Violation"):
            await nats.connect(own.url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=2, **options)


async def test_a_refused_runner_says_so_once_and_stops(own: NatsServer, caplog: pytest.LogCaptureFixture) -> None:
    """Wrong credentials end connect_nats at once with one line, not a retry loop of tracebacks."""
    settings = Settings(nats_url=own.url, nats_user=RUNNER, nats_password="wrong")
    with caplog.at_level(logging.DEBUG, logger="konnectz_runner"), pytest.raises(ConfigError) as refused:
        await asyncio.wait_for(connect_nats(settings, deadline=20), 10)
    assert "refused user 'runner'" in str(refused.value) and "wrong" not in str(refused.value)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
    ok = await connect_nats(Settings(**own.settings(RUNNER)))
    await ok.close()


async def test_a_refused_subject_is_logged_once(own: NatsServer, caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage("NATS", logging.getLogger("konnectz_runner.test"))
    client = await nats.connect(own.url, **connect_options(OPERATOR, own.passwords[OPERATOR]), **nats_callbacks(outage))
    try:
        with caplog.at_level(logging.DEBUG, logger="konnectz_runner.test"):
            for _ in range(3):
                await client.publish("kz.runs.1", b"{}")
                await client.flush()
            await asyncio.sleep(0.3)
        refusals = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(refusals) == 1 and refusals[0].levelno == logging.ERROR
        assert "kz.runs.1" in refusals[0].getMessage()
        assert not outage.down  # a refusal is not an outage
    finally:
        await client.close()


async def test_the_operator_writes_flows_and_nothing_else(own: NatsServer, admin: nats.NATS) -> None:
    client = await _as(own, OPERATOR)
    try:
        kv = await client.jetstream().key_value(KV_KONNECTS)
        await kv.put(konnect_key(7), b'{"konnect_id": 7}')
        assert (await kv.get(konnect_key(7))).value == b'{"konnect_id": 7}'
        await kv.delete(konnect_key(7))
    finally:
        await client.close()
    await _refused_publish(own, OPERATOR, "kz.runs.7")  # no runs
    await _refused_publish(own, OPERATOR, "kz.runs.pool.7")
    await _refused_api(own, OPERATOR, "stream_info", STREAM_RUNS)  # no run payloads
    await _refused_api(own, OPERATOR, "get_last_msg", STREAM_EVENTS, "kz.events.7")  # no task events
    await _refused_api(own, OPERATOR, "key_value", KV_STEPS)


async def test_the_runner_cannot_read_task_events_deploy_flows_or_answer_quotas(
    own: NatsServer, admin: nats.NATS
) -> None:
    runner = await _as(own, RUNNER)
    try:
        await ensure_streams(runner.jetstream())  # it creates what it uses (as at every start)
        kv = await runner.jetstream().key_value(KV_KONNECTS)  # it reads the flows
        assert kv is not None
    finally:
        await runner.close()
    await admin.jetstream().publish("kz.events.1", b"{}")
    client = await _as(own, RUNNER)
    try:  # it may look up the api's consumer (ensure_streams does) but never take an event from it
        sub = await client.jetstream().pull_subscribe("kz.events.>", EVENTS_CONSUMER, stream=STREAM_EVENTS)
        with pytest.raises((TimeoutError, NatsError)):
            await sub.fetch(1, timeout=0.5)
    finally:
        await client.close()
    await _refused_api(own, RUNNER, "get_last_msg", STREAM_EVENTS, "kz.events.1")
    await _refused_publish(own, RUNNER, f"$KV.{KV_KONNECTS}.{konnect_key(1)}")  # flows come from the api
    errors: list[Exception] = []
    client = await _as(own, RUNNER, errors)
    try:
        await client.subscribe(QUOTA_SUBJECT)  # only the api answers quota requests
        await client.subscribe("_INBOX_api.>")  # nor reads the api's replies
        await client.flush()
        await asyncio.sleep(0.3)
        refused = " ".join(str(e).lower() for e in errors)
        assert "subscription to" in refused and "kz.quota.reserve" in refused and "_inbox_api" in refused
    finally:
        await client.close()


async def test_the_api_cannot_read_the_runners_replies(own: NatsServer) -> None:
    errors: list[Exception] = []
    client = await _as(own, API, errors)
    try:
        await client.subscribe("_INBOX_runner.>")
        await client.flush()
        await asyncio.sleep(0.3)
        assert any("_inbox_runner" in str(e).lower() for e in errors), errors
    finally:
        await client.close()
