"""Fake third-party apps for the tests of every component: the pieces each fake is made of, and
one small fake provider with its two manifests.

- :class:`JsonHandler`, a request handler that stays quiet and answers JSON (``_reply``);
  :class:`LocalServer` serves one on a free port of 127.0.0.1 in a thread;
- :func:`curated_app`, a catalogue manifest of a curated app (the head every fake app's manifest
  repeats: id, key, name, source, base_url, auth, events); :func:`token_auth`, the ``auth`` of an
  API key sent as ``Authorization: Token``; :func:`catalogue_with`, the repository's catalogue plus
  one fake app's manifest;
- :class:`FakeApp` and :func:`write_manifests`: the fake provider the api tests and the browser tests
  use (token auth, OAuth2 with PKCE, a list, a create), and its two apps.

The fake provider is a real HTTP server on a free port (a thread), speaking just enough of an API:

- ``GET /authorize``: the consent page; answers 302 to ``redirect_uri`` with ``code`` and ``state``
  (it remembers the PKCE challenge of each code). With ``consent = True`` it first shows an HTML
  page whose Allow button (``approve=1``) grants, as a provider does in a browser;
- ``POST /token``: authorization_code (checks client, redirect_uri and the S256 verifier) and
  refresh_token grants; access tokens expire after ``expires_in`` (settable);
- ``GET /me``: 200 with a name for a valid X-Api-Key or bearer token, else 401;
- ``GET /projects``, ``GET /projects/{id}/lists``, ``POST /tasks``, ``GET /tasks``.
- ``POST /hooks-without-secret`` (a webhook subscription whose reply has no secret), ``DELETE`` anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from konnectz_devstack._platform import REPO_ROOT

__all__ = [
    "API_KEY",
    "CLIENT_ID",
    "CLIENT_SECRET",
    "FakeApp",
    "JsonHandler",
    "LocalServer",
    "catalogue_with",
    "curated_app",
    "token_auth",
    "write_manifests",
]

CLIENT_ID = "fake-client"
CLIENT_SECRET = "fake-client-secret-0123456789"  # noqa: S105  # a fake provider's
API_KEY = "key-0123456789abcdef"


class JsonHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers JSON; subclasses add ``do_GET``, ``do_POST``…"""

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        """``body`` as JSON (no body when None), with ``headers`` besides Content-Type and -Length."""
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class LocalServer:
    """``handler`` served on a free port of 127.0.0.1 by a daemon thread, from construction (or from
    :meth:`start` with ``start=False``) until :meth:`stop`; ``url`` is its base URL. A server that
    takes bursts of connections at once may queue more than the socket's default 5."""

    def __init__(
        self, handler: type[BaseHTTPRequestHandler], *, start: bool = True, request_queue_size: int = 5
    ) -> None:
        server = type("Server", (ThreadingHTTPServer,), {"request_queue_size": request_queue_size})
        self.httpd = server(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        if start:
            self.thread.start()

    def start(self) -> LocalServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def curated_app(
    app_id: int, key: str, name: str, auth: dict[str, Any], events: list[dict[str, Any]], **more: Any
) -> dict[str, Any]:
    """The manifest of a curated app ``key`` (``base_url``, ``rate_limit``… in ``more``)."""
    return {"id": app_id, "key": key, "name": name, "source": {"kind": "curated"}, "auth": auth, "events": events,
            **more}  # fmt: skip


def token_auth() -> dict[str, Any]:
    """A manifest's ``auth`` of one API key, sent as ``Authorization: Token <key>``; the account test
    is ``GET /me``, whose ``name`` names the account."""
    return {
        "type": "api_key",
        "fields": [{"key": "api_key", "label": "API Key"}],
        "inject": [{"location": "header", "name": "Authorization", "value": "Token {{auth.api_key}}"}],
        "test": {"path": "/me", "label_path": "name"},
    }


def catalogue_with(root: Path, manifest: dict[str, Any], base_url: str) -> Path:
    """A catalogue folder under ``root``: the repository's apps plus ``manifest`` pointed at
    ``base_url`` (a local fake); the folder to give the platform as KONNECTZ_CATALOGUE_DIR."""
    shutil.copytree(REPO_ROOT / "catalogue" / "apps", root / "apps")
    (root / "apps" / f"{manifest['key']}.json").write_text(json.dumps({**manifest, "base_url": base_url}))
    return root


class FakeApp:
    def __init__(self) -> None:
        self.codes: dict[str, dict[str, str]] = {}
        self.tokens: dict[str, float] = {}  # access token -> expiry (epoch seconds)
        self.refresh_tokens: set[str] = set()
        self.expires_in = 3600
        self.consent = False
        self.requests: list[dict[str, Any]] = []
        self.tasks: list[dict[str, Any]] = []
        self.local = LocalServer(self._handler(), start=False)
        self.url = self.local.url

    def start(self) -> FakeApp:
        self.local.start()
        return self

    def stop(self) -> None:
        self.local.stop()

    def issue(self) -> dict[str, Any]:
        access, refresh = secrets.token_hex(16), secrets.token_hex(16)
        self.tokens[access] = time.time() + self.expires_in
        self.refresh_tokens.add(refresh)
        return {"access_token": access, "refresh_token": refresh, "expires_in": self.expires_in, "token_type": "Bearer"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(JsonHandler):
            def _authorised(self) -> bool:
                if self.headers.get("X-Api-Key") == API_KEY:
                    return True
                auth = self.headers.get("Authorization", "")
                token = auth.removeprefix("Bearer ")
                return auth.startswith("Bearer ") and fake.tokens.get(token, 0) > time.time()

            def _record(self, body: Any = None) -> None:
                fake.requests.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                )

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                self._record()
                if url.path == "/authorize":
                    if query.get("client_id") != CLIENT_ID or query.get("code_challenge_method") != "S256":
                        return self._reply(400, {"error": "invalid_request"})
                    if fake.consent and query.get("approve") != "1":
                        allow = "/authorize?" + urlencode({**query, "approve": "1"})
                        page = (
                            "<!doctype html><title>Fake OAuth consent</title><h1>Konnectz wants to use your "
                            f"Fake account</h1><p>Scopes: {html.escape(query.get('scope', ''))}</p>"
                            f'<a id="allow" href="{html.escape(allow)}">Allow</a>'
                        ).encode()
                        self.send_response(200)
                        self.send_header("Content-Type", "text/html; charset=utf-8")
                        self.send_header("Content-Length", str(len(page)))
                        self.end_headers()
                        self.wfile.write(page)
                        return None
                    code = secrets.token_hex(8)
                    fake.codes[code] = {"challenge": query["code_challenge"], "redirect_uri": query["redirect_uri"]}
                    target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if not self._authorised():
                    return self._reply(401, {"error": "invalid_token"})
                if url.path == "/me":
                    return self._reply(200, {"user": {"name": "Ada at Fake"}})
                if url.path == "/projects":
                    return self._reply(200, {"data": [{"id": 1, "title": "Launch"}, {"id": 2, "title": "Ops"}]})
                if url.path.startswith("/projects/") and url.path.endswith("/lists"):
                    project = url.path.split("/")[2]
                    return self._reply(200, {"data": [{"id": f"{project}-a", "title": f"Todo of {project}"}]})
                if url.path == "/tasks":
                    return self._reply(200, {"data": list(reversed(fake.tasks))})
                return self._reply(404, {"error": "not found"})

            def do_POST(self) -> None:
                url = urlparse(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if url.path == "/token":
                    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    self._record(form)
                    if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
                        return self._reply(401, {"error": "invalid_client"})
                    if form.get("grant_type") == "authorization_code":
                        pending = fake.codes.pop(form.get("code", ""), None)
                        verifier = form.get("code_verifier", "")
                        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
                        if pending is None or pending["challenge"] != digest.decode():
                            return self._reply(400, {"error": "invalid_grant"})
                        if pending["redirect_uri"] != form.get("redirect_uri"):
                            return self._reply(400, {"error": "invalid_grant"})
                        return self._reply(200, fake.issue())
                    if form.get("grant_type") == "refresh_token" and form.get("refresh_token") in fake.refresh_tokens:
                        fake.refresh_tokens.discard(form["refresh_token"])
                        return self._reply(200, fake.issue())
                    return self._reply(400, {"error": "invalid_grant"})
                body = json.loads(raw or b"{}")
                self._record(body)
                if not self._authorised():
                    return self._reply(401, {"error": "invalid_token"})
                if url.path == "/tasks":
                    task = {"id": len(fake.tasks) + 1, **body}
                    fake.tasks.append(task)
                    return self._reply(201, task)
                if url.path == "/hooks-without-secret":  # subscribes, but its reply carries no secret
                    return self._reply(201, {"id": "hook-7", "url": body.get("url")})
                return self._reply(404, {"error": "not found"})

            def do_DELETE(self) -> None:
                self._record()
                if not self._authorised():
                    return self._reply(401, {"error": "invalid_token"})
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None

        return Handler


def write_manifests(directory: Path, base_url: str) -> None:
    """Two apps on the fake: one with token fields, one with OAuth2 (PKCE)."""
    events: list[dict[str, Any]] = [
        {
            "key": "list_projects",
            "kind": "search",
            "label": "List Projects",
            "operation": {"method": "GET", "path": "/projects"},
            "output": {"items_path": "data"},
        },
        {
            "key": "list_lists",
            "kind": "search",
            "label": "List Lists",
            "operation": {"method": "GET", "path": "/projects/{project}/lists"},
            "fields": [{"key": "project", "label": "Project", "location": "path", "required": True}],
            "output": {"items_path": "data"},
        },
        {
            "key": "create_task",
            "kind": "action",
            "label": "Create Task",
            "operation": {"method": "POST", "path": "/tasks"},
            "fields": [
                {
                    "key": "project",
                    "label": "Project",
                    "required": True,
                    "sequence": 1,
                    "dynamic": {"event": "list_projects", "label_path": "title"},
                },
                {
                    "key": "list",
                    "label": "List",
                    "sequence": 2,
                    "dynamic": {"event": "list_lists", "label_path": "title", "depends_on": ["project"]},
                },
                {"key": "title", "label": "Title", "required": True},
                {"key": "points", "label": "Points", "type": "integer", "body_path": "estimate.points"},
            ],
        },
        {
            "key": "new_task",
            "kind": "trigger",
            "label": "New Task",
            "operation": {"method": "GET", "path": "/tasks"},
            "output": {"items_path": "data"},
            "trigger": {"type": "polling", "dedupe": "id"},
        },
    ]
    token_auth: dict[str, Any] = {
        "type": "api_key",
        "fields": [{"key": "api_key", "help": "Settings > API"}],
        "inject": [{"location": "header", "name": "X-Api-Key", "value": "{{auth.api_key}}"}],
        "test": {"path": "/me", "label_path": "user.name"},
    }
    oauth_auth: dict[str, Any] = {
        "type": "oauth2",
        "oauth2": {
            "authorization_url": f"{base_url}/authorize",
            "token_url": f"{base_url}/token",
            "scopes": ["read", "write"],
        },
        "inject": [{"location": "header", "name": "Authorization", "value": "Bearer {{auth.access_token}}"}],
        "test": {"path": "/me", "label_path": "user.name"},
    }
    token_app = curated_app(900001, "fake_token", "Fake Token App", token_auth, events, base_url=base_url)
    oauth_app = curated_app(900002, "fake_oauth", "Fake OAuth App", oauth_auth, events, base_url=base_url)
    for app in (token_app, oauth_app):
        (directory / f"{app['key']}.json").write_text(json.dumps(app))
