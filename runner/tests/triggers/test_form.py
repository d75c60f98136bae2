"""Form input trigger: field checks, the hosted page, and a submission becoming a run (real NATS)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import nats
import pytest
import uvicorn
from nats.js.api import ConsumerConfig, DeliverPolicy
from pydantic import ValidationError

from konnectz_contracts.events import KV_KONNECTS, STREAM_EVENTS, TaskEvent, event_subject, konnect_key
from konnectz_contracts.limits import FORM_MAX_BYTES
from konnectz_contracts.nats_auth import RUNNER
from konnectz_contracts.spec import ApiCallStep, FlowSpec, FormTrigger, KeyValue
from konnectz_contracts.triggers.form import check_submission, render_done, render_form
from konnectz_devstack._ports import free_port
from konnectz_runner.apps import parse_networks
from konnectz_runner.bus import ensure_streams
from konnectz_runner.config import Settings
from konnectz_runner.ingress import create_app

FIELDS = [
    {"key": "name", "label": "Your name", "required": True, "max_length": 20},
    {"key": "email", "label": "Email", "type": "email", "required": True},
    {"key": "seats", "label": "Seats", "type": "number"},
    {"key": "day", "label": "Day", "type": "date"},
    {"key": "plan", "label": "Plan", "type": "select", "options": ["Basic", "Pro <b>"]},
    {"key": "news", "label": "Newsletter", "type": "checkbox"},
    {"key": "note", "label": "Note", "type": "textarea"},
]


def form(**extra: Any) -> FormTrigger:
    return FormTrigger.model_validate({"token": "f" * 32, "title": "Book a <seat>", "fields": FIELDS, **extra})


def test_a_good_submission_gives_typed_values() -> None:
    values, errors = check_submission(form(), {"name": " Ada ", "email": "ada@example.org", "seats": "3",
                                               "day": "2026-05-01", "plan": "Pro <b>", "news": "on", "note": "",
                                               "extra": "ignored"})  # fmt: skip
    assert errors == {}
    assert values == {"name": "Ada", "email": "ada@example.org", "seats": 3, "day": "2026-05-01",
                      "plan": "Pro <b>", "news": True}  # fmt: skip
    assert check_submission(form(), {"name": "A", "email": "a@b.co", "seats": "2.50"})[0]["seats"] == 2.5
    assert check_submission(form(), {"name": "A", "email": "a@b.co"})[0] == {"name": "A", "email": "a@b.co",
                                                                             "news": False}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"email": "a@b.co"}, "name", "This field is required"),
        ({"name": "   ", "email": "a@b.co"}, "name", "This field is required"),
        ({"name": "x" * 21, "email": "a@b.co"}, "name", "At most 20 characters"),
        ({"name": "a\x00b", "email": "a@b.co"}, "name", "The text contains a NUL character"),
        ({"name": ["a", "b"], "email": "a@b.co"}, "name", "Give one value"),
        ({"name": "A", "email": "not-an-email"}, "email", "Enter an email address"),
        ({"name": "A", "email": "a@b"}, "email", "Enter an email address"),
        ({"name": "A", "email": "a@b.co", "seats": "NaN"}, "seats", "Enter a number"),
        ({"name": "A", "email": "a@b.co", "seats": "1e400"}, "seats", "Enter a number"),
        ({"name": "A", "email": "a@b.co", "seats": "9" * 5000}, "seats", "At most 1000 characters"),
        ({"name": "A", "email": "a@b.co", "day": "2026-02-30"}, "day", "Enter a date as YYYY-MM-DD"),
        ({"name": "A", "email": "a@b.co", "day": "2026-05-01T10:00"}, "day", "Enter a date as YYYY-MM-DD"),
        ({"name": "A", "email": "a@b.co", "plan": "Enterprise"}, "plan", "Choose one of the options"),
        ({"name": "A", "email": "a@b.co", "news": "maybe"}, "news", "Tick the box or leave it empty"),
    ],
)
def test_bad_submissions_name_the_field(data: dict[str, Any], field: str, message: str) -> None:
    _values, errors = check_submission(form(), data)
    assert errors == {field: message}


def test_form_definitions_are_checked() -> None:
    with pytest.raises(ValidationError, match="a select needs options"):
        form(fields=[{"key": "p", "label": "P", "type": "select"}])
    with pytest.raises(ValidationError, match="unique"):
        form(fields=[{"key": "p", "label": "P"}, {"key": "p", "label": "Q"}])
    with pytest.raises(ValidationError):
        form(fields=[{"key": "bad key", "label": "P"}])
    with pytest.raises(ValidationError):
        form(fields=[])


def test_pages_escape_everything() -> None:
    page = render_form(form(), values={"name": '"><script>alert(1)</script>'}, errors={"email": "Enter <x>"})
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "Book a &lt;seat&gt;" in page and "Pro &lt;b&gt;" in page and "Enter &lt;x&gt;" in page
    assert 'name="email"' in page and 'type="date"' in page and "<textarea" in page
    assert "Thank you!" in render_done(form())


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@pytest.fixture
async def runner_base(nats_server: Any) -> AsyncIterator[str]:
    settings = Settings(  # no api here: quotas are tested in test_quota.py
        **nats_server.settings(RUNNER), allow_private_networks=parse_networks("127.0.0.0/8"), enforce_quota=False
    )
    port = free_port()
    server = _QuietServer(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, lifespan="on",
                                         log_level="warning"))  # fmt: skip
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done()
        await asyncio.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await asyncio.wait_for(task, 30)


@pytest.mark.integration
async def test_hosted_form_submission_runs_the_flow(nats_server: Any, runner_base: str, echo: Any) -> None:
    token = secrets.token_urlsafe(32)
    spec = FlowSpec(
        konnect_id=secrets.randbelow(10**9) + 10**6, owner_id=4, name="Bookings", trigger_id="node-1",
        trigger=form(token=token),
        steps=[ApiCallStep(id="node-2", name="Notify", method="POST", url=echo.base + "/echo",
                           body=[KeyValue(key="who", value="{{node-1.name}}"),
                                 KeyValue(key="seats", value="{{node-1.seats}}")])],
    )  # fmt: skip
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    await ensure_streams(js)
    kv = await js.key_value(KV_KONNECTS)
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    url = f"{runner_base}/forms/{token}"
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            for _ in range(100):  # the runner picks the konnect up from the bucket
                page = await http.get(url)
                if page.status_code == 200:
                    break
                await asyncio.sleep(0.05)
            assert page.status_code == 200 and "text/html" in page.headers["content-type"]
            assert "script-src" not in page.headers["content-security-policy"]
            assert "default-src 'none'" in page.headers["content-security-policy"]
            assert '<form method="post"' in page.text and "Book a &lt;seat&gt;" in page.text

            bad = await http.post(url, data={"name": "Ada", "email": "nope"})
            assert bad.status_code == 400 and "Enter an email address" in bad.text and 'value="Ada"' in bad.text
            bad_json = await http.post(url, json={"name": "Ada"})
            assert bad_json.status_code == 400
            assert bad_json.json()["errors"] == {"email": "This field is required"}

            done = await http.post(url, data={"name": "Ada", "email": "ada@example.org", "seats": "2"})
            assert done.status_code == 200 and "Thank you!" in done.text
            accepted = await http.post(url, json={"name": "Bob", "email": "bob@example.org"})
            assert accepted.status_code == 200 and accepted.json()["status"] == "accepted"

            assert (await http.post(f"{runner_base}/forms/{'x' * 40}", data={})).status_code == 404
            # A form konnect is not a webhook, and a huge body is refused.
            assert (await http.post(f"{runner_base}/hooks/{token}", json={})).status_code == 404
            huge = await http.post(url, content=b"name=" + b"a" * (2 * 1024 * 1024),
                                   headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
            assert huge.status_code == 413
            # A form's own limit (256 KiB) is below a webhook's: a 300 KB submission is a 413 that says so.
            over = await http.post(url, json={"name": "a" * 300_000, "email": "ada@example.org"})
            assert over.status_code == 413 and str(FORM_MAX_BYTES) in over.json()["message"]

        sub = await js.pull_subscribe(event_subject(spec.konnect_id), stream=STREAM_EVENTS,
                                      config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL))  # fmt: skip
        events: list[TaskEvent] = []
        for _ in range(50):
            with contextlib.suppress(nats.errors.TimeoutError, TimeoutError):  # fetch raises either
                events += [TaskEvent.model_validate_json(m.data) for m in await sub.fetch(5, timeout=0.5)]
            if len(events) >= 2:
                break
        assert sorted(e.trigger_output["name"] for e in events) == ["Ada", "Bob"]
        assert all(e.status == "SUCCESS" for e in events)
        got = sorted((r.json() for r in echo.requests_to("/echo")), key=lambda b: b["who"])
        assert got == [{"who": "Ada", "seats": 2}, {"who": "Bob", "seats": ""}]  # the number stays a number
    finally:
        await kv.delete(konnect_key(spec.konnect_id))
        await nc.drain()
