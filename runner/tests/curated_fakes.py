"""The harness of the curated-app fakes (``test_curated_fakes*.py``).

A :class:`Fake` is a real local HTTP server calling ``handle(request) -> (status, body)`` and
recording every request. :func:`exercise` points a curated manifest at it and runs what the
manifest promises: every action and search through the ``app_event`` step (all must succeed with
the values given), the first action again with a wrong credential (the step must report the API's
401), and one polling trigger polled three times (the first poll records, a new item is found
once, then nothing is new).

Each test file defines its fakes as ``handle`` factories taking a state dict (lists of items the
fake serves; the trigger's ``add`` appends to it) and a :class:`Case` per app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from konnectz_contracts.manifest import App, Polling
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_contracts.triggers.polling import Cursor, PollingTrigger, pick_new
from konnectz_devstack.fake_apps import LocalServer
from konnectz_runner.apps import Catalogue, NetGuard, load_catalogue, parse_networks
from konnectz_runner.engine import app_event, app_items

REPO = Path(__file__).resolve().parents[2]
CURATED = {a.key: a for a in load_catalogue(REPO / "catalogue", include_generated=False).apps}
TOKEN = "fake-token-0123456789"
Reply = tuple[int, Any]  # a handler may also answer (status, body, headers), e.g. a Link header
State = dict[str, list[Any]]


class Request:
    def __init__(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str], raw: bytes):
        self.method, self.path, self.query, self.headers, self.raw = method, path, query, headers, raw
        kind = headers.get("content-type", "")
        self.form = {k: v[0] for k, v in parse_qs(raw.decode()).items()} if "urlencoded" in kind else {}
        self.json: Any = json.loads(raw) if raw and "json" in kind else {}


class Fake:
    """A real HTTP server calling ``handle(request) -> (status, body[, headers])``; records every request."""

    def __init__(self, handle: Callable[[Request], Reply]) -> None:
        self.requests: list[Request] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(self.command, parts.path, parse_qs(parts.query), headers, raw)
                outer.requests.append(request)
                status, body, *more = handle(request)
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in (more[0] if more else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        self.local = LocalServer(Handler)
        self.url = self.local.url

    def stop(self) -> None:
        self.local.stop()


@dataclass
class Case:
    """One curated app against its fake.

    ``handler(state)`` builds the fake's ``handle``; ``base_path`` is appended to the fake's URL
    as the app's base_url (it may use the manifest's templates, e.g. ``/bot{{auth.bot_token}}``);
    ``trigger`` is the polling trigger exercised and ``add(state, n)`` gives the fake its n-th new
    item; ``values`` are the field values of each event (key → field → value).
    """

    handler: Callable[[State], Callable[[Request], Reply]]
    base_path: str
    trigger: str
    add: Callable[[State, int], None]
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Extra credential fields the manifest's base_url or auth uses (e.g. a Zendesk subdomain).
    credentials: dict[str, Any] = field(default_factory=dict)


def _step(app: App, event_key: str, values: dict[str, Any]) -> AppEventStep:
    return AppEventStep(
        id="n",
        name=app.name,
        app_id=app.id,
        event=event_key,
        account_id=1,
        fields=[{"key": k, "value": v if isinstance(v, str) else json.dumps(v)} for k, v in values.items()],
    )


async def exercise(key: str, case: Case, make_ctx: Any) -> tuple[App, Fake, State]:
    """Run every action and search, a wrong credential and the polling trigger of ``key``."""
    state: State = {}
    fake = Fake(case.handler(state))
    app = CURATED[key].model_copy(update={"base_url": fake.url + case.base_path})
    good = {f.key: TOKEN for f in app.auth.fields} | {"access_token": TOKEN} | case.credentials

    async def source(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return good

    async def wrong(account_id: int, konnect_id: int, owner_id: int, refresh: bool) -> dict[str, Any]:
        return {k: "wrong" for k in good if k not in case.credentials} | case.credentials

    app_event.set_catalogue(lambda: Catalogue(apps=[app]))
    app_event.set_credential_source(source)
    try:
        for event in app.events:
            if event.kind == "trigger":
                continue
            outcome = await app_event.run(_step(app, event.key, case.values.get(event.key, {})), make_ctx())
            assert outcome.status == "SUCCESS", f"{key}/{event.key}: {outcome.error}"

        # A wrong credential is refused by the fake as by the live API (the step reports it).
        app_event.set_credential_source(wrong)
        first = next(e for e in app.events if e.kind == "action")
        refused = await app_event.run(_step(app, first.key, case.values.get(first.key, {})), make_ctx())
        assert refused.status == "ERROR" and "HTTP 401" in (refused.error or ""), refused.error
        app_event.set_credential_source(source)

        # The polling trigger: the first poll records, a new item is found once, then nothing is new.
        event = app.event(case.trigger)
        assert event is not None and isinstance(event.trigger, Polling), f"{key}/{case.trigger} is not polled"
        strategy = event.trigger
        trigger = PollingTrigger(
            app=app.key,
            event=event.key,
            app_id=app.id,
            account_id=1,
            items_path=event.output.items_path or "",
            event_fields=[
                {"key": k, "value": v if isinstance(v, str) else json.dumps(v)}
                for k, v in case.values.get(event.key, {}).items()
            ],
            dedupe=strategy.dedupe,
            id_path=strategy.id_path,
            timestamp_path=strategy.timestamp_path,
            since_param=strategy.since_param,
            since_format=strategy.since_format,
        )
        case.add(state, 1)
        cursor = Cursor()
        guard = NetGuard(parse_networks("127.0.0.0/8"))
        async with httpx.AsyncClient(timeout=10) as http:
            found: list[list[Any]] = []
            for round_ in range(3):
                if round_ == 1:
                    case.add(state, 2)
                items = await app_items(trigger, cursor, konnect_id=1, owner_id=1, http=http, guard=guard)
                fresh, cursor, _ = pick_new(trigger, items, cursor, datetime.now(UTC))
                found.append([item for _, item in fresh])
        assert found[0] == [] and len(found[1]) == 1 and found[2] == [], f"{key}: {found}"
    finally:
        app_event.set_credential_source(None)
        app_event.set_catalogue(app_event.default_catalogue)
        fake.stop()
    return app, fake, state


# --- Building blocks of the REST fakes ------------------------------------------------------------
Route = tuple[str, str, tuple[str, ...], Callable[[Request, dict[str, str], State], Reply]]


def dig(body: Any, path: str) -> Any:
    value = body
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def rest(
    routes: list[Route],
    *,
    authorized: Callable[[Request], bool],
    unauthorized: Reply,
    missing: Callable[[str], Reply],
    not_found: Reply,
) -> Callable[[State], Callable[[Request], Reply]]:
    """A fake answering ``routes`` (method, path regex, required body/query params, reply)."""

    def factory(state: State) -> Callable[[Request], Reply]:
        def handle(r: Request) -> Reply:
            if not authorized(r):
                return unauthorized
            for method, pattern, required, reply in routes:
                match = re.fullmatch(pattern, r.path)
                if method == r.method and match:
                    body = r.json if isinstance(r.json, dict) else {}
                    for key in required:
                        value = r.query[key][0] if key in r.query else dig(body, key)
                        if value in (None, "", [], {}):
                            return missing(key)
                    return reply(r, match.groupdict(), state)
            return not_found

        return handle

    return factory


def iso(n: int) -> str:
    return (datetime(2026, 11, 20, tzinfo=UTC) + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def newest(state: State, kind: str) -> list[Any]:
    return list(reversed(state.get(kind, [])))


def echo(**extra: Any) -> Callable[[Request, dict[str, str], State], Reply]:
    return lambda r, p, s: (200, {**(r.json if isinstance(r.json, dict) else {}), **p, **extra})


BEARER = f"Bearer {TOKEN}"


def bearer(r: Request) -> bool:
    return r.headers.get("authorization") == BEARER
