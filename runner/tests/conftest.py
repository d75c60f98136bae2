"""Shared fixtures: a real local HTTP server that records what it receives."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from konnectz_devstack.fake_apps import LocalServer

# Helper modules of these tests (curated_fakes) import by name under --import-mode=importlib.
sys.path.insert(0, str(Path(__file__).parent))


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class EchoServer:
    """Routes: /echo (JSON reply), /status/<code>, /text, /slow, /redirect?to=..&code=..,
    /loop (redirects to itself), /flaky/<key>?fail=N&code=C[&retry_after=V] (answers C, with
    ``Retry-After: V`` if given, to the first N requests for that key, then like /echo)."""

    port: int
    received: list[Received] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests_to(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]


def _handler(server: EchoServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            query = parse_qs(parts.query, keep_blank_values=True)
            server.received.append(Received(self.command, parts.path, query, dict(self.headers.items()), body))
            if parts.path.startswith("/flaky/"):
                key = parts.path.rsplit("/", 1)[1]
                server.calls[key] = server.calls.get(key, 0) + 1
                if server.calls[key] <= int(query.get("fail", ["1"])[0]):
                    extra = {"Retry-After": query["retry_after"][0]} if "retry_after" in query else None
                    self._reply(int(query.get("code", ["503"])[0]), b"try again", "text/plain", extra)
                    return
            if parts.path == "/echo" or parts.path.startswith("/flaky/"):
                reply = {
                    "method": self.command,
                    "path": parts.path,
                    "query": query,
                    "id": 42,
                    "items": [{"sku": "A-1"}],
                }
                self._reply(200, json.dumps(reply).encode(), "application/json", {"X-Echo": "yes"})
            elif parts.path.startswith("/status/"):
                code = int(parts.path.rsplit("/", 1)[1])
                self._reply(code, b"not here: " + b"x" * 300, "text/plain")
            elif parts.path == "/text":
                self._reply(200, "plain text \u00e9".encode(), "text/plain; charset=utf-8")
            elif parts.path == "/slow":
                time.sleep(1.5)
                self._reply(200, b"late", "text/plain")
            elif parts.path == "/redirect":
                code = int(query.get("code", ["302"])[0])
                self._reply(code, b"", "text/plain", {"Location": query["to"][0]})
            elif parts.path == "/loop":
                self._reply(302, b"", "text/plain", {"Location": "/loop"})
            else:
                self._reply(404, b"no route", "text/plain")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    return Handler


@pytest.fixture(scope="session")
def nats_server() -> Iterator[Any]:
    """The runner tests' own NATS (one per xdist worker), not the one the api tests share: KZ_EVENTS
    keeps an event only until the api's consumer stores it (interest retention), and an api of the
    api tests in the same worker would take the events these tests read back."""
    from konnectz_devstack._nats import NatsServer
    from konnectz_devstack._ports import free_port
    from konnectz_devstack.pytest_plugin import serving

    with serving("konnectz-nats-runner-", lambda base: NatsServer(base, free_port())) as server:
        yield server


@pytest.fixture(scope="session")
def echo_server() -> Iterator[EchoServer]:
    state = EchoServer(port=0)
    local = LocalServer(_handler(state))
    state.port = local.httpd.server_address[1]
    yield state
    local.stop()


@pytest.fixture
def echo(echo_server: EchoServer) -> EchoServer:
    echo_server.received.clear()
    echo_server.calls.clear()
    return echo_server


@pytest.fixture
def wire_apps() -> Iterator[Callable[..., None]]:
    """``wire_apps(apps, source=None)``: the app-event step reads its catalogue from ``apps`` (their
    manifests) and, when ``source`` is given, an account's credentials from ``source(account_id,
    konnect_id, owner_id, refresh)``; both are restored after the test."""
    from konnectz_runner.apps import Catalogue
    from konnectz_runner.engine import app_event

    def wire(apps: list[Any], source: Callable[..., Any] | None = None) -> None:
        catalogue = Catalogue(apps=list(apps))
        app_event.set_catalogue(lambda: catalogue)
        if source is not None:
            app_event.set_credential_source(source)

    yield wire
    app_event.set_credential_source(None)
    app_event.set_catalogue(app_event.default_catalogue)


@pytest.fixture
async def make_ctx() -> AsyncIterator[Any]:
    """``make_ctx(outputs, timezone="UTC", now=None)``: a StepContext for calling a step's ``run``."""
    from datetime import datetime

    import httpx

    from konnectz_contracts.model import utcnow
    from konnectz_runner.apps import NetGuard, parse_networks
    from konnectz_runner.engine import StepContext

    async with httpx.AsyncClient(timeout=5) as client:

        def build(outputs: dict[str, Any] | None = None, *, timezone: str = "UTC", now: datetime | None = None) -> Any:
            return StepContext(
                outputs=dict(outputs or {}),
                http=client,
                guard=NetGuard(parse_networks("127.0.0.0/8")),
                timezone=timezone,
                now=(lambda: now) if now is not None else utcnow,
            )

        yield build


@pytest.fixture(scope="module")
async def nc(nats_server: Any) -> AsyncIterator[Any]:
    """A NATS connection with every stream the runner uses (one per test module)."""
    import nats

    from konnectz_runner.bus import ensure_streams

    client = await nats.connect(nats_server.admin_url)
    await ensure_streams(client.jetstream())
    yield client
    await client.drain()


@pytest.fixture(scope="module")
async def shared_runner(nats_server: Any) -> AsyncIterator[Any]:
    """A runner (webhook server, worker, scheduler) shared by a test module's tests."""
    from .test_server import start_runner

    running = await start_runner(nats_server)
    yield running
    await running.stop()
