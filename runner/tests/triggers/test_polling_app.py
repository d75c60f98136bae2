"""A catalogue app's polling trigger: the manifest event run through the generic HTTP step, with the
account's credentials fetched from a credential broker at poll time with the konnect-scoped token."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from nats.aio.client import Client as NATS
from pydantic import ValidationError

from konnectz_contracts.broker_token import konnect_token
from konnectz_contracts.manifest import App
from konnectz_contracts.spec import ApiCallStep, FlowSpec, PollingTrigger
from konnectz_contracts.triggers.polling import newest_item
from konnectz_devstack.fake_apps import JsonHandler, LocalServer, curated_app
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.clock import read_cursor
from konnectz_runner.clock.poller import poll_once

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
API_KEY = "app-key-0123456789"
BROKER_KEY = "broker-key-" + "x" * 30


class Server:
    """A real local HTTP server: ``/items`` of a fake app (paged, bearer key) and a fake broker."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = [{"id": 1, "title": "first", "created_at": "2026-06-01T10:00:00Z"}]
        self.requests: list[dict[str, Any]] = []
        self.broker_calls: list[dict[str, Any]] = []
        self.fail_next: list[tuple[int, dict[str, str]]] = []
        state = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:  # the credential broker
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                state.broker_calls.append({"body": body, "auth": self.headers.get("Authorization")})
                if self.headers.get("Authorization") != f"Bearer {konnect_token(BROKER_KEY, body['konnect_id'], '')}":
                    return self._reply(401, {"message": "A token scoped to this konnect is required"})
                return self._reply(200, {"credentials": {"api_key": API_KEY}})

            def do_GET(self) -> None:  # the app
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                state.requests.append({"path": parts.path, "query": query, "auth": self.headers.get("Authorization")})
                if state.fail_next:
                    code, headers = state.fail_next.pop(0)
                    return self._reply(code, {"error": "slow down"}, headers)
                if self.headers.get("Authorization") != f"Bearer {API_KEY}":
                    return self._reply(401, {"error": "bad key"})
                newest_first = [i for i in state.items[::-1] if i.get("list") in (None, query.get("list"))]
                page, size = int(query.get("page", "1")), int(query.get("per_page", "100"))
                return self._reply(200, {"data": newest_first[(page - 1) * size : page * size]})

        self.local = LocalServer(Handler)
        self.url = self.local.url


def manifest(base_url: str, **strategy: Any) -> App:
    auth = {
        "type": "bearer",
        "fields": [{"key": "api_key"}],
        "inject": [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.api_key}}"}],
    }
    event = {
        "key": "new_item",
        "kind": "trigger",
        "label": "New Item",
        "operation": {"method": "GET", "path": "/items"},
        "fields": [{"key": "list", "label": "List", "location": "query"}],
        "output": {"items_path": "data"},
        "pagination": {"style": "page", "page_param": "page", "size_param": "per_page", "page_size": 2, "max_pages": 3},
        "trigger": {"type": "polling", **strategy},
    }
    rate_limit = {"max_retries": 2, "max_retry_after_seconds": 5}
    return App.model_validate(
        curated_app(880001, "pollapp", "Poll App", auth, [event], base_url=base_url, rate_limit=rate_limit)
    )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, wire_apps: Callable[..., None]) -> Iterator[Server]:
    srv = Server()
    wire_apps([manifest(srv.url)])
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_URL", f"{srv.url}/api/v1/internal/credentials")
    monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", BROKER_KEY)
    monkeypatch.delenv("KONNECTZ_CREDENTIALS_TOKEN", raising=False)
    yield srv
    srv.local.stop()


def spec_of(trigger: PollingTrigger) -> FlowSpec:
    return FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6,
        owner_id=5,
        name="New items",
        trigger_id="node-1",
        trigger=trigger,
        steps=[ApiCallStep(id="node-2", name="Note", url="https://example.com/")],
    )


def app_trigger(**extra: Any) -> PollingTrigger:
    return PollingTrigger.model_validate(
        {"app": "pollapp", "event": "new_item", "app_id": 880001, "account_id": 12, "items_path": "data", **extra}
    )


def test_a_trigger_has_a_url_or_an_app_event() -> None:
    with pytest.raises(ValidationError, match="either url or app_id"):
        PollingTrigger.model_validate({"event": "x"})
    with pytest.raises(ValidationError, match="either url or app_id"):
        PollingTrigger.model_validate({"url": "https://a.example/", "app_id": 3, "event": "x"})
    with pytest.raises(ValidationError, match="names its event"):
        PollingTrigger.model_validate({"app_id": 3})


def test_the_newest_item_is_the_latest_timestamp_or_the_first_listed() -> None:
    items = [{"id": 1, "t": "2026-01-01T00:00:00Z"}, {"id": 2, "t": "2026-03-01T00:00:00Z"}, {"x": 1}]
    assert newest_item(app_trigger(timestamp_path="t"), items) == {"id": 2, "t": "2026-03-01T00:00:00Z"}
    assert newest_item(app_trigger(), items) == items[0]
    assert newest_item(app_trigger(), [{"no": "id"}]) is None


@pytest.mark.integration
async def test_polls_the_manifest_event_with_broker_credentials_retries_and_pages(
    nc: NATS, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    js = nc.jetstream()
    spec = spec_of(app_trigger(event_fields=[{"key": "list", "value": "inbox"}]))
    for i in (2, 3):  # three items: two pages of two
        server.items.append({"id": i, "title": f"item {i}", "list": "inbox"})
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=10) as http:
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []  # the first poll records
        cursor, _ = await read_cursor(js, spec.konnect_id)
        assert cursor.initialized and sorted(cursor.seen) == ["1", "2", "3"] and cursor.last_error is None
        # Credentials came from the broker with this konnect's token, for the trigger's account.
        assert server.broker_calls[0]["body"] == {"account_id": 12, "konnect_id": spec.konnect_id, "refresh": False}
        assert server.broker_calls[0]["auth"] == f"Bearer {konnect_token(BROKER_KEY, spec.konnect_id, '')}"
        pages = [r["query"] for r in server.requests]
        assert pages == [
            {"list": "inbox", "per_page": "2", "page": "1"},
            {"list": "inbox", "per_page": "2", "page": "2"},
        ]
        assert {r["auth"] for r in server.requests} == {f"Bearer {API_KEY}"}

        # A new item, and the app first answers 429 with Retry-After: 1.
        server.items.append({"id": 4, "title": "fourth", "list": "inbox"})
        server.fail_next = [(429, {"Retry-After": "1"})]
        started = time.monotonic()
        runs = await poll_once(js, spec, http=http, guard=guard, now=NOW)
        assert time.monotonic() - started >= 0.9
        assert [r.trigger_output["title"] for r in runs] == ["fourth"] and runs[0].source == "polling"
        # A 503 is retried too; nothing new: no run.
        server.fail_next = [(503, {})]
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []
        cursor, _ = await read_cursor(js, spec.konnect_id)
        assert cursor.last_error is None and "4" in cursor.seen

        # The broker refuses a runner whose token is not this konnect's: the poll starts nothing and
        # the cursor says why, keeping what it had seen.
        monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", "wrong-key-" + "y" * 30)
        server.items.append({"id": 5, "title": "fifth", "list": "inbox"})
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []
        failed, _ = await read_cursor(js, spec.konnect_id)
        assert failed.last_error is not None and "HTTP 401 from the credential broker" in failed.last_error
        assert failed.seen == cursor.seen
        monkeypatch.setenv("KONNECTZ_CREDENTIALS_KEY", BROKER_KEY)
        assert [r.trigger_output["id"] for r in await poll_once(js, spec, http=http, guard=guard, now=NOW)] == [5]


@pytest.mark.integration
async def test_since_parameter_and_a_changed_source_records_afresh(nc: NATS, server: Server) -> None:
    js = nc.jetstream()
    spec = spec_of(app_trigger(dedupe="timestamp", timestamp_path="created_at", since_param="since"))
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=10) as http:
        assert await poll_once(js, spec, http=http, guard=guard, now=NOW) == []
        assert "since" not in server.requests[-1]["query"]
        server.items.append({"id": 9, "title": "later", "created_at": "2026-06-01T11:00:00Z"})
        runs = await poll_once(js, spec, http=http, guard=guard, now=NOW)
        assert [r.trigger_output["id"] for r in runs] == [9]
        assert server.requests[-1]["query"]["since"] == "2026-06-01T10:00:00Z"
        # Re-published with another account: the old cursor is not compared with the new source.
        again = app_trigger(account_id=13, dedupe="timestamp", timestamp_path="created_at", since_param="since")
        moved = spec.model_copy(update={"trigger": again})
        server.items.append({"id": 10, "title": "newest", "created_at": "2026-06-01T11:30:00Z"})
        assert await poll_once(js, moved, http=http, guard=guard, now=NOW) == []  # records again
        assert "since" not in server.requests[-1]["query"]
        cursor, _ = await read_cursor(js, spec.konnect_id)
        assert cursor.since == datetime(2026, 6, 1, 11, 30, tzinfo=UTC)
