"""App webhook triggers through real processes (api + runner + PostgreSQL + NATS), with the curated
GitHub and Stripe manifests pointed at a local fake of each API.

Publishing subscribes the konnect's URL at the app (GitHub: a repository hook with a secret Konnectz
generates; Stripe: a webhook endpoint whose reply carries the signing secret); a delivery signed the
way the app signs starts one run; a wrong, missing or stale signature is refused with 401 and
starts nothing; withdrawing or deleting the konnect unsubscribes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import psycopg
import pytest
import yaml

from konnectz_devstack import Platform
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import api_call_node, sign_up, wait_until
from konnectz_runner.manifest import App
from konnectz_runner.signatures import sign

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
GITHUB_TOKEN, STRIPE_KEY = "gho_fake0123456789", "sk_test_fake0123456789"
WHSEC = "whsec_fake0123456789abcdef"


class FakeApis:
    """Just enough of GitHub's and Stripe's APIs: the account tests, creating and deleting hooks."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.hooks: dict[str, dict[str, Any]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any = None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization", "")
                stripe = self.path.startswith("/v1/")
                if auth != f"Bearer {STRIPE_KEY if stripe else GITHUB_TOKEN}":
                    return self._reply(401, {"message": "Bad credentials"})
                if stripe and "form" not in self.headers.get("Content-Type", "form"):
                    return self._reply(400, {"error": "Stripe takes form bodies"})
                body = (
                    ({k: v[0] for k, v in parse_qs(raw.decode()).items()} if stripe else json.loads(raw)) if raw else {}
                )
                outer.calls.append({"method": self.command, "path": self.path, "body": body})
                if self.command == "GET":
                    return self._reply(200, {"login": "octocat"} if self.path == "/user" else {"object": "balance"})
                if self.command == "POST" and self.path == "/repos/octo/hello/hooks":
                    outer.hooks["77"] = body
                    return self._reply(201, {"id": 77, "active": True, "config": {"url": body["config"]["url"]}})
                if self.command == "POST" and self.path == "/v1/webhook_endpoints":
                    outer.hooks["we_1"] = body
                    return self._reply(200, {"id": "we_1", "object": "webhook_endpoint", "secret": WHSEC})
                if self.command == "DELETE" and self.path in (
                    "/repos/octo/hello/hooks/77",
                    "/v1/webhook_endpoints/we_1",
                ):
                    outer.hooks.pop(self.path.rsplit("/", 1)[1], None)
                    return self._reply(204) if not stripe else self._reply(200, {"id": "we_1", "deleted": True})
                return self._reply(404, {"message": "Not Found"})

            do_GET = do_POST = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _manifest(key: str, base_url: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / "catalogue" / "apps" / f"{key}.yaml").read_text())
    data["base_url"] = base_url
    if key == "github":  # a token account instead of the OAuth2 dance (tested elsewhere)
        data["auth"] = {
            "type": "bearer",
            "fields": [{"key": "access_token", "label": "Token"}],
            "inject": data["auth"]["inject"],
            "test": data["auth"]["test"],
        }
    App.model_validate(data)
    return data


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeApis]:
    apis = FakeApis()
    yield apis
    apis.server.shutdown()
    apis.server.server_close()


@pytest.fixture(scope="module")
def platform(fake: FakeApis) -> Iterator[Platform]:
    state = Path(tempfile.mkdtemp(prefix="konnectz-app-webhooks-"))
    state.chmod(0o755)
    root = state / "catalogue"
    shutil.copytree(REPO / "catalogue" / "apps", root / "apps")
    for key in ("github", "stripe"):
        (root / "apps" / f"{key}.yaml").unlink()
        (root / "apps" / f"{key}.json").write_text(json.dumps(_manifest(key, fake.url)))
    plat = make_platform(state / "platform", KONNECTZ_CATALOGUE_DIR=str(root))
    plat.start()
    yield plat
    plat.stop()
    shutil.rmtree(state, ignore_errors=True)


def _canvas(app_id: int, key: str, event: str, account_id: int, receiver_url: str, **config: str) -> dict[str, Any]:
    trigger = {
        "id": "node-1",
        "type": "TriggerNode",
        "position": {"x": 0, "y": 0},
        "data": {
            "app_detail": {"id": app_id, "name": key.title(), "provider": key, "app_index": 1},
            "selectedEvent": {"id": event},
            "selectedAccount": {"id": account_id},
            "configResponses": [{"config_key": k, "value": v} for k, v in config.items()],
        },
    }
    action = api_call_node(f"{receiver_url}/events", body=[{"key": "what", "value": "{{node-1.action}}"}])
    return {"flowName": f"{key} events", "dataForSelect": {}, "apps": [trigger, action],
            "links": [{"source": "node-1", "target": "node-2"}]}  # fmt: skip


def _publish(api: httpx.Client, headers: dict[str, str], canvas: dict[str, Any]) -> tuple[int, str]:
    tested = api.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas},
        headers=headers,
    ).json()
    assert tested["test_status"] == "Success", tested
    r = api.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": tested["konnect_id"], "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return int(r.json()["konnect_id"]), r.json()["webhook_url"]


def _account(api: httpx.Client, headers: dict[str, str], app_id: int, values: dict[str, str]) -> int:
    r = api.post("/api/v1/authorization", json={"app_id": app_id, "auth_response": values}, headers=headers)
    assert r.status_code == 200, r.text
    return int(r.json()["app_user_id"])


def test_github_and_stripe_webhooks_subscribe_verify_and_unsubscribe(platform: Platform, fake: FakeApis,
                                                                     receiver) -> None:  # fmt: skip
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "hooks@example.com", "a-long-password")

    def logs(konnect_id: int) -> list[dict[str, Any]]:
        return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

    # GitHub: a repository hook with a secret Konnectz generated.
    github = _account(api, headers, 106, {"access_token": GITHUB_TOKEN})
    canvas = _canvas(106, "github", "issue_event", github, receiver.url, owner="octo", repo="hello")
    konnect_id, url = _publish(api, headers, canvas)
    hook = fake.hooks["77"]
    assert hook["config"]["url"] == url and hook["events"] == ["issues"] and hook["config"]["content_type"] == "json"
    secret = hook["config"]["secret"]
    assert len(secret) == 64
    with psycopg.connect(platform.postgres.dsn) as db:  # kept encrypted, like credentials
        stored = db.execute("SELECT secret, external_id FROM app_webhook_subscriptions").fetchall()
    assert len(stored) == 1 and stored[0][1] == "77" and secret not in stored[0][0]
    body = json.dumps({"action": "opened", "issue": {"number": 1}}).encode()
    signature = "X-Hub-Signature-256"
    wrong = httpx.post(url, content=body, headers={"Content-Type": "application/json", signature: "sha256=" + "0" * 64})
    assert wrong.status_code == 401 and signature in wrong.json()["message"]
    assert httpx.post(url, content=body, headers={"Content-Type": "application/json"}).status_code == 401
    github_sig = sign(App.model_validate(_manifest("github", fake.url)).event("issue_event").trigger.signature,
                      secret, body)  # fmt: skip
    good = wait_until(
        lambda: httpx.post(url, content=body, headers={"Content-Type": "application/json", signature: github_sig}),
        what="the signed delivery",
    )
    assert good.status_code == 200, good.text
    found = wait_until(lambda: logs(konnect_id), timeout=30, what="the run of the delivery")
    assert len(found) == 1 and found[0]["data"]["node-1"]["action"] == "opened"
    wait_until(lambda: receiver.requests, timeout=20, what="the action")
    assert receiver.requests[-1]["body"] == {"what": "opened"}
    # Withdrawn: the hook is deleted at GitHub.
    r = api.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200, r.text
    assert "77" not in fake.hooks and fake.calls[-1]["method"] == "DELETE"

    # Stripe: a webhook endpoint whose reply carries the signing secret.
    stripe = _account(api, headers, 115, {"api_key": STRIPE_KEY})
    konnect_id, url = _publish(api, headers, _canvas(115, "stripe", "webhook_event", stripe, receiver.url))
    endpoint = fake.hooks["we_1"]
    assert endpoint["url"] == url and endpoint["enabled_events[0]"] == "payment_intent.succeeded"
    event = json.dumps({"id": "evt_1", "type": "payment_intent.succeeded", "action": "paid"}).encode()
    stripe_sig = App.model_validate(_manifest("stripe", fake.url)).event("webhook_event").trigger.signature
    now = int(time.time())
    stale = sign(stripe_sig, WHSEC, event, timestamp=now - 3600)
    wrong_secret = sign(stripe_sig, "whsec_other", event, timestamp=now)
    for bad in (stale, wrong_secret):
        r = httpx.post(url, content=event, headers={"Content-Type": "application/json", "Stripe-Signature": bad})
        assert r.status_code == 401, r.text
    before = len(receiver.requests)
    good = wait_until(
        lambda: httpx.post(url, content=event, headers={"Content-Type": "application/json",
                                                        "Stripe-Signature": sign(stripe_sig, WHSEC, event,
                                                                                 timestamp=int(time.time()))}),
        what="the signed Stripe delivery",
    )  # fmt: skip
    assert good.status_code == 200, good.text
    wait_until(lambda: len(receiver.requests) > before, timeout=30, what="the Stripe run's action")
    assert len(wait_until(lambda: logs(konnect_id), timeout=30)) == 1
    # Deleted: the endpoint is deleted at Stripe.
    r = api.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "DELETED"}, headers=headers)
    assert r.status_code == 200, r.text
    assert "we_1" not in fake.hooks
    # The runner's door to secrets is scoped like the credentials one.
    r = api.post(
        "/api/v1/internal/webhook_secret", json={"konnect_id": konnect_id}, headers={"Authorization": "Bearer x"}
    )
    assert r.status_code == 401
