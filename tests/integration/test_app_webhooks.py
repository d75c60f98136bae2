"""App webhook triggers through real processes (api + runner + PostgreSQL + NATS), with the curated
GitHub, Stripe, Calendly and Typeform manifests pointed at a local fake of each API.

Publishing subscribes the konnect's URL at the app (GitHub: a repository hook with a secret Konnectz
generates; Stripe: a webhook endpoint whose reply carries the signing secret; Calendly: a webhook
subscription for the chosen organization with a signing key Konnectz generates, named in the reply
by its URI; Typeform: a form webhook named by a tag of the konnect's own, with a secret Konnectz
generates); a delivery signed the way the app signs starts one run; a wrong, missing or stale
signature is refused with 401 and starts nothing; withdrawing or deleting the konnect unsubscribes
(Calendly: DELETE of the subscription's uuid, the last segment of its URI; Typeform: DELETE of that
konnect's tag only, another konnect on the same form keeps its webhook).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import psycopg
import pytest
import yaml

from konnectz_contracts.manifest import App
from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import add_account, api_call_node, sign_up, wait_until
from konnectz_runner.ingress.signatures import sign

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
GITHUB_TOKEN, STRIPE_KEY = "gho_fake0123456789", "sk_test_fake0123456789"
WHSEC = "whsec_fake0123456789abcdef"
CALENDLY_TOKEN = "calendly_fake0123456789"
CALENDLY = "https://api.calendly.com"
CALENDLY_ORG = f"{CALENDLY}/organizations/BBBBBBBBBBBBBBBB"
CALENDLY_HOOK = "6b5a4e3f-2d1c-4b0a-9f8e-7d6c5b4a3f2e"
TYPEFORM_TOKEN, TYPEFORM_FORM = "tfp_fake0123456789", "lT4Z3j"


class FakeApis:
    """Just enough of GitHub's, Stripe's, Calendly's and Typeform's APIs: the account tests, creating
    and deleting hooks."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.hooks: dict[str, dict[str, Any]] = {}
        outer = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                auth = self.headers.get("Authorization", "")
                stripe = self.path.startswith("/v1/")
                if self.path == "/users/me" or self.path.startswith("/webhook_subscriptions"):
                    return self._calendly(auth, raw)
                if self.path == "/me" or self.path.startswith("/forms/"):
                    return self._typeform(auth, raw)
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

            def _calendly(self, auth: str, raw: bytes) -> None:
                """Calendly API v2: POST /webhook_subscriptions (url, events, organization, scope, and
                the optional signing_key) answers 201 with the subscription named by its URI; DELETE
                takes the subscription's uuid."""
                if auth != f"Bearer {CALENDLY_TOKEN}":
                    return self._reply(401, {"title": "Unauthenticated", "message": "The access token is invalid"})
                body = json.loads(raw) if raw else {}
                outer.calls.append({"method": self.command, "path": self.path, "body": body})
                if self.command == "GET" and self.path == "/users/me":
                    return self._reply(200, {"resource": {"uri": f"{CALENDLY}/users/AAA", "email": "ada@example.com",
                                                          "current_organization": CALENDLY_ORG}})  # fmt: skip
                if self.command == "POST" and self.path == "/webhook_subscriptions":
                    if "json" not in self.headers.get("Content-Type", ""):
                        return self._reply(415, {"title": "Unsupported Media Type", "message": "Use JSON"})
                    blank = [k for k in ("url", "events", "organization", "scope") if not body.get(k)]
                    if blank or body["scope"] not in ("organization", "user", "group"):
                        details = [{"parameter": k, "message": "can't be blank"} for k in blank or ["scope"]]
                        return self._reply(400, {"title": "Invalid Argument", "details": details,
                                                 "message": "The supplied parameters are invalid."})  # fmt: skip
                    outer.hooks[CALENDLY_HOOK] = body
                    resource = {"uri": f"{CALENDLY}/webhook_subscriptions/{CALENDLY_HOOK}",
                                "callback_url": body["url"], "events": body["events"], "scope": body["scope"],
                                "organization": body["organization"], "state": "active"}  # fmt: skip
                    return self._reply(201, {"resource": resource})
                if self.command == "DELETE" and self.path.startswith("/webhook_subscriptions/"):
                    uuid = self.path.rsplit("/", 1)[1]
                    if uuid not in outer.hooks:
                        return self._reply(404, {"title": "Resource Not Found", "message": "The server could "
                                                 "not find the requested resource."})  # fmt: skip
                    outer.hooks.pop(uuid)
                    return self._reply(204)
                return self._reply(404, {"title": "Resource Not Found", "message": self.path})

            def _typeform(self, auth: str, raw: bytes) -> None:
                """Typeform's Webhooks API: PUT /forms/{form_id}/webhooks/{tag} (url, enabled, secret,
                verify_ssl) creates or replaces the form's webhook of that tag; DELETE removes it."""
                if auth != f"Bearer {TYPEFORM_TOKEN}":
                    return self._reply(403, {"code": "AUTHENTICATION_FAILED", "description": "Authentication failed"})
                body = json.loads(raw) if raw else {}
                outer.calls.append({"method": self.command, "path": self.path, "body": body})
                if self.command == "GET" and self.path == "/me":
                    return self._reply(200, {"alias": "Ada", "email": "ada@example.com", "language": "en"})
                parts = self.path.split("/")  # "", forms, <form>, webhooks, <tag>
                if len(parts) != 5 or parts[2] != TYPEFORM_FORM or parts[3] != "webhooks":
                    return self._reply(404, {"code": "NOT_FOUND", "description": "Endpoint not found"})
                key = f"typeform:{parts[4]}"
                if self.command == "PUT":
                    if not body.get("url") or not isinstance(body.get("enabled"), bool):
                        return self._reply(
                            400, {"code": "VALIDATION_ERROR", "description": "url and enabled are required"}
                        )
                    outer.hooks[key] = body
                    return self._reply(200, {"id": f"wh{len(outer.hooks)}", "form_id": parts[2], "tag": parts[4],
                                             "url": body["url"], "enabled": body["enabled"]})  # fmt: skip
                if self.command == "DELETE" and outer.hooks.pop(key, None) is not None:
                    return self._reply(204)
                return self._reply(404, {"code": "NOT_FOUND", "description": "Webhook not found"})

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.server = LocalServer(Handler)
        self.url = self.server.url


def _manifest(key: str, base_url: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / "catalogue" / "apps" / f"{key}.yaml").read_text())
    data["base_url"] = base_url
    if key in ("github", "calendly", "typeform"):  # a token account instead of the OAuth2 dance (tested elsewhere)
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
    apis.server.stop()


@pytest.fixture(scope="module")
def platform(fake: FakeApis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    root = tmp_path_factory.mktemp("catalogue")
    shutil.copytree(REPO / "catalogue" / "apps", root / "apps")
    for key in ("github", "stripe", "calendly", "typeform"):
        (root / "apps" / f"{key}.yaml").unlink()
        (root / "apps" / f"{key}.json").write_text(json.dumps(_manifest(key, fake.url)))
    with running_platform("konnectz-app-webhooks-", KONNECTZ_CATALOGUE_DIR=str(root)) as plat:
        yield plat


def _canvas(app_id: int, key: str, event: str, account_id: int, receiver_url: str, what: str = "{{node-1.action}}",
            **config: str) -> dict[str, Any]:  # fmt: skip
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
    action = api_call_node(f"{receiver_url}/events", body=[{"key": "what", "value": what}])
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


def test_github_and_stripe_webhooks_subscribe_verify_and_unsubscribe(platform: Platform, fake: FakeApis,
                                                                     receiver) -> None:  # fmt: skip
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "hooks@example.com", "a-long-password")

    def logs(konnect_id: int) -> list[dict[str, Any]]:
        return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

    # GitHub: a repository hook with a secret Konnectz generated.
    github = add_account(api, headers, 106, {"access_token": GITHUB_TOKEN})
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
    stripe = add_account(api, headers, 115, {"api_key": STRIPE_KEY})
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


def test_calendly_webhook_subscribes_with_a_signing_key_verifies_and_unsubscribes_by_uuid(
    platform: Platform, fake: FakeApis, receiver
) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "calendly-hooks@example.com", "a-long-password")
    account = add_account(api, headers, 128, {"access_token": CALENDLY_TOKEN})
    canvas = _canvas(128, "calendly", "invitee_created", account, receiver.url, what="{{node-1.payload.email}}",
                     organization=CALENDLY_ORG)  # fmt: skip
    konnect_id, url = _publish(api, headers, canvas)

    # Subscribed for the chosen organization (the scope's default), with a signing key Konnectz made.
    sent = fake.hooks[CALENDLY_HOOK]
    assert sent["url"] == url and sent["events"] == ["invitee.created"]
    assert sent["organization"] == CALENDLY_ORG and sent["scope"] == "organization"
    key = sent["signing_key"]
    assert len(key) == 64
    with psycopg.connect(platform.postgres.dsn) as db:
        stored = db.execute(
            "SELECT secret, external_id FROM app_webhook_subscriptions WHERE konnect_id = %s", (konnect_id,)
        ).fetchall()
    assert stored[0][1] == CALENDLY_HOOK and key not in stored[0][0]

    # Calendly-Webhook-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>"> with the signing key.
    delivery = {"event": "invitee.created", "created_at": "2026-11-23T09:00:00.000000Z",
                "payload": {"email": "ada@example.com", "name": "Ada Lovelace"}}  # fmt: skip
    body = json.dumps(delivery).encode()
    signature = App.model_validate(_manifest("calendly", fake.url)).event("invitee_created").trigger.signature
    header = "Calendly-Webhook-Signature"

    def post(value: str | None) -> httpx.Response:
        extra = {header: value} if value is not None else {}
        return httpx.post(url, content=body, headers={"Content-Type": "application/json", **extra})

    now = int(time.time())
    for bad in (sign(signature, "another-key", body, timestamp=now), sign(signature, key, body, timestamp=now - 3600),
                f"t={now},v1={'0' * 64}", None):  # fmt: skip
        r = post(bad)
        assert r.status_code == 401, r.text
    before = len(receiver.requests)
    good = wait_until(lambda: post(sign(signature, key, body, timestamp=int(time.time()))),
                      what="the signed Calendly delivery")  # fmt: skip
    assert good.status_code == 200, good.text
    wait_until(lambda: len(receiver.requests) > before, timeout=30, what="the Calendly run's action")
    assert receiver.requests[-1]["body"] == {"what": "ada@example.com"}
    runs = wait_until(
        lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"],
        timeout=30,
    )
    time.sleep(1)  # a refused delivery would have started a run by now
    assert len(api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]) == 1
    assert len(runs) == 1 and runs[0]["data"]["node-1"]["payload"]["email"] == "ada@example.com"

    # Withdrawn: DELETE /webhook_subscriptions/<uuid>, not the URI Calendly named it by.
    r = api.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200, r.text
    assert fake.calls[-1]["method"] == "DELETE"
    assert fake.calls[-1]["path"] == f"/webhook_subscriptions/{CALENDLY_HOOK}"
    assert CALENDLY_HOOK not in fake.hooks
    assert (
        httpx.post(
            url, content=body, headers={header: sign(signature, key, body, timestamp=int(time.time()))}
        ).status_code
        == 404
    )


def test_typeform_webhooks_of_two_konnects_on_one_form_are_two_tags(platform: Platform, fake: FakeApis,
                                                                   receiver) -> None:  # fmt: skip
    """Typeform names a form's webhook by its tag: each konnect has its own, so publishing a second
    konnect on the same form does not take the first one's deliveries, and withdrawing one keeps the
    other's webhook."""
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "typeform-hooks@example.com", "a-long-password")
    account = add_account(api, headers, 129, {"access_token": TYPEFORM_TOKEN})
    signature = App.model_validate(_manifest("typeform", fake.url)).event("new_response_webhook").trigger.signature
    published = []
    for name in ("Ada", "Grace"):
        canvas = _canvas(129, "typeform", "new_response_webhook", account, receiver.url,
                         what="{{node-1.form_response.hidden.name}}", form_id=TYPEFORM_FORM)  # fmt: skip
        konnect_id, url = _publish(api, headers, canvas)
        hook = fake.hooks[f"typeform:konnectz-{konnect_id}"]
        assert hook["url"] == url and hook["enabled"] is True and len(hook["secret"]) == 64
        published.append((konnect_id, url, hook["secret"], name))
    assert published[0][2] != published[1][2]

    # Typeform-Signature: sha256=<base64 HMAC-SHA256 of the body> with that webhook's secret.
    def deliver(url: str, body: bytes, secret: str) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Typeform-Signature": sign(signature, secret, body)}
        return httpx.post(url, content=body, headers=headers)

    for konnect_id, url, secret, name in published:
        response = {"form_id": TYPEFORM_FORM, "hidden": {"name": name}}
        body = json.dumps({"event_type": "form_response", "form_response": response}).encode()
        other = next(p[2] for p in published if p[0] != konnect_id)
        assert deliver(url, body, other).status_code == 401
        before = len(receiver.requests)
        good = wait_until(partial(deliver, url, body, secret), what="the signed Typeform delivery")
        assert good.status_code == 200, good.text
        wait_until(partial(lambda n: len(receiver.requests) > n, before), timeout=30, what="the Typeform run's action")
        assert receiver.requests[-1]["body"] == {"what": name}

    # Withdrawing the first deletes its tag only.
    first, second = published[0][0], published[1][0]
    r = api.post(f"/api/v1/konnects/{first}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200, r.text
    assert fake.calls[-1]["method"] == "DELETE"
    assert fake.calls[-1]["path"] == f"/forms/{TYPEFORM_FORM}/webhooks/konnectz-{first}"
    assert f"typeform:konnectz-{first}" not in fake.hooks and f"typeform:konnectz-{second}" in fake.hooks
    r = api.post(f"/api/v1/konnects/{second}/update_status", json={"status": "DELETED"}, headers=headers)
    assert r.status_code == 200, r.text
    assert f"typeform:konnectz-{second}" not in fake.hooks
