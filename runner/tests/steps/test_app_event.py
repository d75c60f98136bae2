"""The generic app-event step against a real local HTTP server speaking a small fake API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from konnectz_contracts.manifest import App, Polling
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_devstack.fake_apps import JsonHandler, LocalServer, curated_app
from konnectz_runner.apps import Catalogue, build_event_request, load_catalogue
from konnectz_runner.engine import KINDS, app_event
from konnectz_runner.engine.steps.app_event import new_items

TOKEN = "tok-0123456789"


class Fake:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.fail_next: list[tuple[int, dict[str, str]]] = []
        self.valid_tokens = {TOKEN}
        self.items = [{"id": i, "name": f"item {i}"} for i in range(1, 6)]


def _handler(fake: Fake) -> type[JsonHandler]:
    class Handler(JsonHandler):
        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            fake.received.append(
                {"method": self.command, "path": parts.path, "query": query, "headers": dict(self.headers), "body": raw}
            )
            if fake.fail_next:
                code, headers = fake.fail_next.pop(0)
                return self._reply(code, {"error": "try later"}, headers)
            if self.headers.get("Authorization", "").removeprefix("Bearer ") not in fake.valid_tokens:
                return self._reply(401, {"error": "token_expired"})
            if parts.path == "/items":
                page = int(query.get("page", "1"))
                size = int(query.get("per_page", "100"))
                chunk = fake.items[(page - 1) * size : page * size]
                return self._reply(200, {"data": chunk})
            if parts.path.startswith("/boards/") and self.command == "POST":
                body = json.loads(raw or b"{}")
                return self._reply(201, {"id": 99, "board": parts.path.split("/")[2], **body})
            if parts.path == "/chat":
                return self._reply(200, {"ok": False, "error": "channel_not_found"})
            return self._reply(404, {"error": "no route"})

        do_GET = do_POST = _handle

    return Handler


@pytest.fixture
def fake() -> Iterator[tuple[Fake, str]]:
    state = Fake()
    server = LocalServer(_handler(state))
    yield state, server.url
    server.stop()


def _app(base_url: str) -> App:
    auth = {
        "type": "oauth2",
        "oauth2": {"authorization_url": f"{base_url}/authorize", "token_url": f"{base_url}/token"},
        "inject": [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.access_token}}"}],
    }
    return App.model_validate(
        curated_app(
            777,
            "fakeapp",
            "Fake App",
            auth,
            base_url=base_url,
            rate_limit={"max_retries": 2, "max_retry_after_seconds": 1},
            events=[
                {
                    "key": "list_items",
                    "kind": "search",
                    "label": "List Items",
                    "operation": {"method": "GET", "path": "/items"},
                    "output": {"items_path": "data"},
                    "pagination": {"style": "page", "page_param": "page", "size_param": "per_page", "page_size": 2},
                },
                {
                    "key": "new_item",
                    "kind": "trigger",
                    "label": "New Item",
                    "operation": {"method": "GET", "path": "/items"},
                    "output": {"items_path": "data"},
                    "trigger": {"type": "polling", "dedupe": "id"},
                },
                {
                    "key": "create_card",
                    "kind": "action",
                    "label": "Create Card",
                    "operation": {"method": "POST", "path": "/boards/{board}/cards", "body": {"source": "konnectz"}},
                    "fields": [
                        {"key": "board", "label": "Board", "location": "path", "required": True},
                        {"key": "title", "label": "Title", "required": True},
                        {"key": "points", "label": "Points", "type": "integer", "body_path": "meta.points"},
                    ],
                },
                {
                    "key": "post_chat",
                    "kind": "action",
                    "label": "Post",
                    "operation": {"method": "POST", "path": "/chat"},
                    "hooks": ["slack_ok_false"],
                },
            ],
        )
    )


@pytest.fixture
def wired(fake, wire_apps) -> tuple[Fake, list[tuple[int, bool]]]:
    state, base = fake
    calls: list[tuple[int, bool]] = []
    tokens = iter(["refreshed-1", "refreshed-2"])

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        calls.append((account_id, refresh))
        if refresh:
            token = next(tokens)
            state.valid_tokens.add(token)
            return {"access_token": token}
        return {"access_token": TOKEN}

    wire_apps([_app(base)], source)
    return state, calls


def _step(event: str, **fields: str) -> AppEventStep:
    return AppEventStep(
        id="node-2",
        name="Fake",
        app_id=777,
        event=event,
        account_id=5,
        fields=[{"key": k, "value": v} for k, v in fields.items()],
    )


def test_registered_as_a_step_kind() -> None:
    assert KINDS["app_event"] is app_event.run


async def test_action_builds_the_request_from_manifest_fields_and_references(wired, make_ctx) -> None:
    state, _ = wired
    ctx = make_ctx({"node-1": {"board": "b 1/x", "points": "3"}})
    outcome = await app_event.run(
        _step("create_card", board="{{node-1.board}}", title="Launch", points="{{node-1.points}}"), ctx
    )
    assert outcome.status == "SUCCESS", outcome.error
    sent = state.received[-1]
    assert sent["path"] == "/boards/b%201%2Fx/cards" and sent["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert json.loads(sent["body"]) == {"source": "konnectz", "title": "Launch", "meta": {"points": 3}}
    assert outcome.output["id"] == 99
    logged = json.dumps(outcome.input)
    assert TOKEN not in logged and "***" in logged


async def test_missing_required_field_is_a_step_error(wired, make_ctx) -> None:
    outcome = await app_event.run(_step("create_card", board="b1"), make_ctx())
    assert outcome.status == "ERROR" and outcome.error == "Missing required fields: Title"


async def test_search_reads_every_page(wired, make_ctx) -> None:
    state, _ = wired
    outcome = await app_event.run(_step("list_items"), make_ctx())
    assert outcome.status == "SUCCESS", outcome.error
    assert [i["id"] for i in outcome.output["items"]] == [1, 2, 3, 4, 5] and outcome.output["count"] == 5
    assert [r["query"]["page"] for r in state.received] == ["1", "2", "3"]


async def test_429_is_retried_honouring_retry_after(wired, make_ctx) -> None:
    state, _ = wired
    state.fail_next = [(429, {"Retry-After": "0"}), (503, {})]
    outcome = await app_event.run(_step("create_card", board="b", title="t"), make_ctx())
    # 429 is retried for a POST (nothing was done); a 503 on a POST is not (it may have been done).
    assert outcome.status == "ERROR" and "HTTP 503" in outcome.error and len(state.received) == 2
    state.received.clear()
    state.fail_next = [(503, {"Retry-After": "0"}), (429, {"Retry-After": "0"})]
    outcome = await app_event.run(_step("list_items"), make_ctx())
    assert outcome.status == "SUCCESS" and len(state.received) == 5  # two retries, then three pages


async def test_a_failed_action_says_what_kind_of_failure_it_was_and_sends_the_retry_key(wired, make_ctx) -> None:
    """The step's error policy (konnectz_contracts.on_error) decides by the failure's kind and status; an
    action of a step with retries sends its Idempotency-Key, a search does not."""
    state, _ = wired
    state.fail_next = [(503, {"Retry-After": "7"})]
    ctx = make_ctx()
    ctx.idempotency_key = "kz-abc"
    outcome = await app_event.run(_step("create_card", board="b", title="t"), ctx)
    assert (outcome.status, outcome.failure, outcome.status_code, outcome.retry_after) == ("ERROR", "server", 503, 7.0)
    assert state.received[-1]["headers"]["Idempotency-Key"] == "kz-abc"
    state.fail_next = [(404, {})]
    outcome = await app_event.run(_step("create_card", board="b", title="t"), make_ctx())
    assert (outcome.failure, outcome.status_code) == ("client", 404)
    assert "Idempotency-Key" not in state.received[-1]["headers"]
    state.received.clear()
    await app_event.run(_step("list_items"), ctx)
    assert all("Idempotency-Key" not in r["headers"] for r in state.received)
    outcome = await app_event.run(_step("create_card", board="b"), make_ctx())
    assert outcome.failure == "other"  # a missing field: never retried


async def test_expired_token_is_refreshed_once(wired, make_ctx) -> None:
    state, calls = wired
    state.valid_tokens.discard(TOKEN)
    outcome = await app_event.run(_step("create_card", board="b", title="t"), make_ctx())
    assert outcome.status == "SUCCESS", outcome.error
    assert calls == [(5, False), (5, True)]
    assert state.received[-1]["headers"]["Authorization"] == "Bearer refreshed-1"


async def test_ok_false_hook_is_an_error(wired, make_ctx) -> None:
    outcome = await app_event.run(_step("post_chat"), make_ctx())
    assert outcome.status == "ERROR" and outcome.error == "Slack error: channel_not_found"


async def test_polling_finds_no_new_items_on_the_second_poll(wired, make_ctx) -> None:
    state, _ = wired
    strategy = Polling(dedupe="id")
    first = await app_event.run(_step("new_item"), make_ctx())
    fresh, cursor = new_items(first.output["items"], None, strategy)
    assert fresh == [] and cursor["seen"] == ["1", "2", "3", "4", "5"]
    second = await app_event.run(_step("new_item"), make_ctx())
    fresh, cursor = new_items(second.output["items"], cursor, strategy)
    assert fresh == []
    state.items.insert(0, {"id": 6, "name": "item 6"})
    third = await app_event.run(_step("new_item"), make_ctx())
    fresh, cursor = new_items(third.output["items"], cursor, strategy)
    assert [i["id"] for i in fresh] == [6] and cursor["seen"][0] == "6"


def test_polling_by_timestamp() -> None:
    strategy = Polling(dedupe="timestamp", timestamp_path="ts")
    items = [{"ts": "1700000000.1"}, {"ts": "1700000000.3"}]
    assert new_items(items, None, strategy) == ([], {"since": "1700000000.3"})
    later = [{"ts": "1700000000.4"}, *items]
    assert new_items(later, {"since": "1700000000.3"}, strategy) == (
        [{"ts": "1700000000.4"}],
        {"since": "1700000000.4"},
    )


def _sample(field: Any) -> Any:
    if field.options:
        return field.options[0].value
    return {"integer": 1, "number": 1.5, "boolean": True, "array": ["a"], "object": {"a": 1}}.get(field.type, "x1")


def test_every_catalogue_event_builds_a_request() -> None:
    """Each event of each app (curated, and the generated long tail when built) makes one request."""
    catalogue = load_catalogue()
    built = 0
    for app in catalogue:
        credentials = {f.key: f"{f.key}-value" for f in app.auth.fields} | {
            "access_token": "at",
            "instance_url": "https://x.my.salesforce.com",
        }
        for event in app.events:
            if event.operation is None:
                continue
            values = {f.key: _sample(f) for f in event.fields if f.required}
            request = build_event_request(app, event, values, credentials)
            assert request.url.startswith(("https://", "http://")), (app.key, event.key, request.url)
            assert "{" not in request.url.split("?")[0], (app.key, event.key, request.url)
            built += 1
    assert built >= 150


async def test_requests_per_account_are_spaced_by_the_rate_limit(fake, make_ctx) -> None:
    import time

    from konnectz_contracts.manifest import RateLimit

    state, base = fake
    app = _app(base).model_copy(update={"rate_limit": RateLimit(requests_per_second=5)})
    app_event.set_catalogue(lambda: Catalogue(apps=[app]))

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {"access_token": TOKEN}

    app_event.set_credential_source(source)
    try:
        started = time.monotonic()
        for _ in range(4):
            outcome = await app_event.run(_step("create_card", board="b", title="t"), make_ctx())
            assert outcome.status == "SUCCESS", outcome.error
        spaced = time.monotonic() - started
        # Another account of the same app is not held back by the first one's pace.
        other = _step("create_card", board="b", title="t").model_copy(update={"account_id": 6})
        started_other = time.monotonic()
        assert (await app_event.run(other, make_ctx())).status == "SUCCESS"
        alone = time.monotonic() - started_other
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
    assert spaced >= 0.58  # 4 requests at 5/s: three gaps of 0.2 s
    assert alone < 0.15
    stamps = [r for r in state.received if r["method"] == "POST"]
    assert len(stamps) == 5


async def test_a_retry_after_date_is_honoured_and_capped(wired, make_ctx) -> None:
    import email.utils
    import time
    from datetime import UTC, datetime, timedelta

    state, _ = wired
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    state.fail_next = [(429, {"Retry-After": when})]
    started = time.monotonic()
    outcome = await app_event.run(_step("create_card", board="b", title="t"), make_ctx())
    waited = time.monotonic() - started
    assert outcome.status == "SUCCESS", outcome.error
    assert 0.9 <= waited < 5  # the date asks for 30 s; the app's manifest caps a wait at 1 s


def test_numeric_body_path_segments_are_list_indexes() -> None:
    from konnectz_contracts.errors import StepError
    from konnectz_runner.apps.app_request import _set_path

    body: dict[str, Any] = {}
    _set_path(body, "message.to.0.email.address", "a@example.com")
    _set_path(body, "message.to.0.email.name", "Ada")
    _set_path(body, "message.to.1.email.address", "b@example.com")
    assert body == {
        "message": {
            "to": [{"email": {"address": "a@example.com", "name": "Ada"}}, {"email": {"address": "b@example.com"}}]
        }
    }
    for bad in ("message.to.x", "message.to.5.email", "message.to.0.email.address.more"):
        with pytest.raises(StepError, match="conflicts"):
            _set_path(body, bad, "v")


@pytest.mark.parametrize(
    ("form_arrays", "sent"),
    [
        ("repeat", "Sid=FW1&TestUsers=ada&TestUsers=bob&meta%5Bplan%5D=pro"),
        ("indexed", "Sid=FW1&TestUsers%5B0%5D=ada&TestUsers%5B1%5D=bob&meta%5Bplan%5D=pro"),
    ],
)
def test_form_arrays_repeat_their_key_or_are_indexed_as_the_operation_says(form_arrays: str, sent: str) -> None:
    app = App.model_validate(
        {"id": 778, "key": "forms", "name": "Forms", "source": {"kind": "curated"}, "base_url": "https://forms.example.com",
         "auth": {"type": "none"},
         "events": [{"key": "update", "kind": "action", "label": "Update",
                     "operation": {"method": "POST", "path": "/flows", "content_type": "form",
                                   "form_arrays": form_arrays},
                     "fields": [{"key": "Sid", "label": "Sid", "location": "body"},
                                {"key": "TestUsers", "label": "Users", "type": "array", "location": "body"},
                                {"key": "meta", "label": "Meta", "type": "object", "location": "body"}]}]}
    )  # fmt: skip
    request = build_event_request(
        app, app.events[0], {"Sid": "FW1", "TestUsers": ["ada", "bob"], "meta": {"plan": "pro"}}, {}
    )
    assert request.to_httpx(httpx.AsyncClient()).content.decode() == sent


def test_gmail_raw_message_hook_builds_an_rfc2822_message() -> None:
    import base64
    import email
    from email import policy

    from konnectz_contracts.errors import StepError
    from konnectz_runner.apps.app_request import gmail_raw_body

    sent = gmail_raw_body({"to": "ada@example.com", "cc": "bob@example.com", "subject": "Hi ✓", "body": "<b>x</b>",
                           "is_html": "true", "threadId": "t1"})  # fmt: skip
    assert set(sent) == {"raw", "threadId"}
    message = email.message_from_bytes(base64.urlsafe_b64decode(sent["raw"] + "=="), policy=policy.default)
    assert message["To"] == "ada@example.com" and message["Cc"] == "bob@example.com" and message["Subject"] == "Hi ✓"
    assert message.get_content_type() == "text/html" and message.get_content().strip() == "<b>x</b>"
    draft = gmail_raw_body({"to": "ada@example.com", "subject": "s", "body": "plain"}, draft=True)
    assert set(draft) == {"message"} and "raw" in draft["message"]
    with pytest.raises(StepError, match="one line"):
        gmail_raw_body({"to": "a@example.com", "subject": "x\r\nBcc: evil@example.com", "body": ""})


def test_gmail_send_email_request_carries_only_raw() -> None:
    catalogue = load_catalogue(include_generated=False)
    gmail = next(a for a in catalogue if a.key == "gmail")
    event = gmail.event("send_email")
    assert event is not None
    request = build_event_request(
        gmail, event, {"to": "ada@example.com", "subject": "s", "body": "b"}, {"access_token": "t"}
    )
    assert request.url.endswith("/gmail/v1/users/me/messages/send") and set(request.json_body) == {"raw"}


def test_sheet_rows_become_objects_with_their_row_numbers_and_only_new_rows_are_new() -> None:
    from konnectz_runner.apps import rows_as_objects

    rows = [["Name", "Email", ""], ["Ada", "ada@example.com"], [], ["Bob", "bob@example.com", "x"]]
    assert rows_as_objects(rows) == [
        {"row_number": 2, "Name": "Ada", "Email": "ada@example.com", "Column 3": ""},
        {"row_number": 4, "Name": "Bob", "Email": "bob@example.com", "Column 3": "x"},
    ]
    strategy = Polling(dedupe="id", id_path="row_number")
    _, cursor = new_items(rows_as_objects(rows), None, strategy)
    fresh, _ = new_items(rows_as_objects([*rows, ["Cy", "cy@example.com"]]), cursor, strategy)
    assert fresh == [{"row_number": 5, "Name": "Cy", "Email": "cy@example.com", "Column 3": ""}]


def test_items_without_an_id_or_timestamp_never_start_runs() -> None:
    by_id = Polling(dedupe="id")
    items = [{"id": 1}, {"name": "no id"}, "text", {"id": ""}]
    fresh, cursor = new_items(items, None, by_id)
    assert fresh == [] and cursor == {"seen": ["1"]}
    assert new_items(items, cursor, by_id)[0] == []
    by_time = Polling(dedupe="timestamp", timestamp_path="ts")
    _, cursor = new_items([{"ts": "2026-01-01"}, {"x": 1}], None, by_time)
    assert new_items([{"ts": "2026-01-01"}, {"x": 1}], cursor, by_time)[0] == []
