"""Polling trigger: de-duplication by id and by timestamp, the cursor, and runs against real NATS."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from nats.aio.client import Client as NATS
from pydantic import ValidationError

from konnectz_contracts.nats_auth import RUNNER
from konnectz_contracts.spec import ApiCallStep, FlowSpec, PollingTrigger
from konnectz_contracts.triggers.polling import Cursor, new_items, since_value
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.bus import KonnectRegistry
from konnectz_runner.clock import LocalPoller, read_cursor
from konnectz_runner.clock.poller import poll_once

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def trig(**extra: Any) -> PollingTrigger:
    return PollingTrigger.model_validate({"url": "https://api.example.com/issues", **extra})


def test_first_poll_records_then_only_new_ids_run() -> None:
    t = trig(items_path="data.items")
    reply = {"data": {"items": [{"id": 3}, {"id": 2}, {"id": 1}]}}
    items, cursor, _ = new_items(t, reply, Cursor(), NOW)
    assert items == [] and cursor.initialized and cursor.seen == ["3", "2", "1"]
    reply = {"data": {"items": [{"id": 5}, {"id": 4}, {"id": 3}, {"id": 2}]}}
    items, cursor, _ = new_items(t, reply, cursor, NOW)
    assert [k for k, _ in items] == ["5", "4"] and cursor.seen[-2:] == ["5", "4"]
    items, cursor, _ = new_items(t, reply, cursor, NOW)
    assert items == []


def test_seen_ids_are_capped_and_items_without_ids_are_skipped() -> None:
    t = trig(max_seen=10)
    cursor = Cursor(initialized=True, seen=[str(i) for i in range(10)])
    items, cursor, warnings = new_items(t, [{"id": 10}, {"name": "no id"}, {"id": {"nested": 1}}], cursor, NOW)
    assert [k for k, _ in items] == ["10"] and len(cursor.seen) == 10 and cursor.seen[-1] == "10"
    assert warnings == ["an item without id was skipped", "an item without id was skipped"]


def test_timestamp_dedupe_runs_newer_items_oldest_first_and_moves_since() -> None:
    t = trig(dedupe="timestamp", timestamp_path="created_at", since_param="since", max_items_per_poll=2)
    first = [{"n": 1, "created_at": "2026-06-01T10:00:00Z"}]
    items, cursor, _ = new_items(t, first, Cursor(), NOW)
    assert items == [] and cursor.since == datetime(2026, 6, 1, 10, tzinfo=UTC)
    assert since_value(t, cursor) == "2026-06-01T10:00:00Z"
    reply = [
        {"n": 4, "created_at": "2026-06-01T11:30:00+00:00"},
        {"n": 3, "created_at": 1780311600},  # 11:00 UTC as a unix time
        {"n": 2, "created_at": "2026-06-01T10:30:00Z"},
        {"n": 1, "created_at": "2026-06-01T10:00:00Z"},
        {"n": 0, "created_at": "garbage"},
    ]
    items, cursor, warnings = new_items(t, reply, cursor, NOW)
    assert [i["n"] for _, i in items] == [2, 3]  # oldest first, at most two per poll
    assert cursor.since == datetime(2026, 6, 1, 11, tzinfo=UTC)
    assert warnings == ["an item without a readable created_at was skipped"]
    items, cursor, _ = new_items(t, reply, cursor, NOW)
    assert [i["n"] for _, i in items] == [4]  # the one left over
    unix = trig(dedupe="timestamp", timestamp_path="t", since_param="s", since_format="unix_ms")
    assert since_value(unix, cursor) == "1780313400000"  # 11:30 UTC, the newest run so far


def test_bad_replies_and_definitions() -> None:
    with pytest.raises(ValueError, match="no list at 'items'"):
        new_items(trig(items_path="items"), {"items": {"id": 1}}, Cursor(), NOW)
    with pytest.raises(ValidationError, match="timestamp_path"):
        trig(dedupe="timestamp")
    with pytest.raises(ValidationError):
        trig(url="file:///etc/passwd")
    with pytest.raises(ValidationError):
        trig(interval_seconds=1)


class FakeApp:
    """A local app whose list endpoint returns ``items`` (newest first) and records queries."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = [{"id": 1, "title": "first"}]
        self.queries: list[dict[str, list[str]]] = []
        self.status = 200
        state = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                state.queries.append(parse_qs(parts.query))
                self._reply(state.status, {"items": state.items[::-1]})

        self.local = LocalServer(Handler)
        self.url = f"{self.local.url}/items"


@pytest.fixture
def app() -> Iterator[FakeApp]:
    fake = FakeApp()
    yield fake
    fake.local.stop()


@pytest.mark.integration
async def test_polling_starts_one_run_per_new_item_and_keeps_an_inspectable_cursor(nc: NATS, app: FakeApp) -> None:
    js = nc.jetstream()
    spec = FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6, owner_id=5, name="New issues", trigger_id="node-1",
        trigger=PollingTrigger(url=app.url, items_path="items", params=[{"key": "state", "value": "open"}],
                               headers=[{"key": "Authorization", "value": "Bearer s3", "secret": True}]),
        steps=[ApiCallStep(id="node-2", name="Note", url="https://example.com/")],
    )  # fmt: skip
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=5) as http:
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []  # records item 1
        app.items += [{"id": 2, "title": "second"}, {"id": 3, "title": "third"}]
        runs = await poll_once(js, spec, http=http, guard=guard, now=NOW)
        assert [r.trigger_output["title"] for r in runs] == ["third", "second"]
        assert all(r.source == "polling" for r in runs)
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []
        assert app.queries[0] == {"state": ["open"]}

        cursor, revision = await read_cursor(js, spec.konnect_id)
        assert cursor.seen == ["1", "3", "2"] and cursor.last_error is None and revision is not None

        app.status = 500
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []
        cursor, _ = await read_cursor(js, spec.konnect_id)
        assert cursor.last_error is not None and cursor.last_error.startswith("HTTP 500 from")
        assert cursor.seen == ["1", "3", "2"]  # a failed poll forgets nothing

        # The local poller polls once per interval.
        app.status = 200
        app.items.append({"id": 4, "title": "fourth"})
        registry = KonnectRegistry()
        registry.put(spec)
        clock = [NOW]
        poller = LocalPoller(js, registry, http=http, guard=guard, clock=lambda: clock[0])
        assert [r.trigger_output["id"] for r in await poller.tick()] == [4]
        app.items.append({"id": 5})
        assert await poller.tick() == []  # the interval (300 s) has not passed
        clock[0] = datetime(2026, 6, 1, 12, 5, tzinfo=UTC)
        assert [r.trigger_output["id"] for r in await poller.tick()] == [5]


@pytest.mark.integration
async def test_an_item_too_large_to_store_is_skipped_with_the_reason_not_polled_for_ever(
    nc: NATS, app: FakeApp
) -> None:
    js = nc.jetstream()
    spec = FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6, owner_id=5, name="Big items", trigger_id="node-1",
        trigger=PollingTrigger(url=app.url, items_path="items"),
        steps=[ApiCallStep(id="node-2", name="Note", url="https://example.com/")],
    )  # fmt: skip
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=5) as http:
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []  # records item 1
        app.items += [{"id": 2, "body": "\u0001" * 400_000}, {"id": 3, "title": "fits"}]  # 2.4 MB once stored
        runs = await poll_once(js, spec, http=http, guard=guard, now=NOW)
        assert [r.trigger_output["id"] for r in runs] == [3]
        cursor, _ = await read_cursor(js, spec.konnect_id)
        assert cursor.last_error is not None and "An item was skipped" in cursor.last_error
        assert "once stored as JSON" in cursor.last_error
        assert set(cursor.seen) == {"1", "2", "3"}  # the big one is not polled again
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []


@pytest.mark.integration
async def test_cursor_command_prints_the_cursor(nats_server: Any, nc: NATS) -> None:
    import asyncio
    import os
    import sys

    from konnectz_contracts.events import KV_POLLS, konnect_key

    kv = await nc.jetstream().key_value(KV_POLLS)
    await kv.put(konnect_key(424242), Cursor(initialized=True, seen=["a"]).model_dump_json().encode())

    async def cursor_of(konnect_id: str) -> tuple[int | None, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "konnectz_runner", "cursor", "--konnect-id", konnect_id,
            env={**os.environ, **nats_server.env(RUNNER)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        return proc.returncode, out.decode()

    code, out = await cursor_of("424242")
    assert code == 0 and json.loads(out)["seen"] == ["a"]
    assert await cursor_of("424243") == (0, "{}\n")
