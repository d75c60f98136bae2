"""A catalogue app's polling trigger in the api: Test & Review reads the newest item from the live
app through the account; publishing compiles it into the runner's polling trigger."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest

from konnectz_api import catalogue as catalogue_module
from konnectz_api.catalogue import get_index
from konnectz_api.core.config import get_settings
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Konnect
from konnectz_contracts.budgets import KV_BUDGETS, budget_key
from konnectz_devstack import fake_apps
from konnectz_devstack.testing import add_account, api_call_node, app_node

TOKEN_APP, HOOKS_APP = 900001, 900003


@pytest.fixture
def fake(client, fake_provider, monkeypatch):
    def add_hooks_app(folder: Path) -> None:
        hooks_app = json.loads((folder / "fake_token.json").read_text())
        hooks_app.update(id=HOOKS_APP, key="fake_hooks", name="Fake Hooks App")
        # Two webhook triggers on the fake: one whose subscribe the fake refuses (404), one it accepts
        # without giving the signing secret its reply should carry.
        for key, label, hooks, secret in (
            ("task_event", "Task Event (Instant)", "/webhooks", {"secret_path": "secret"}),
            (
                "task_event_no_secret",
                "Task Event (no secret)",
                "/hooks-without-secret",
                {"reply_secret_path": "secret"},
            ),
        ):
            hooks_app["events"].append(
                {
                    "key": key,
                    "kind": "trigger",
                    "label": label,
                    "operation": {"method": "GET", "path": "/tasks"},
                    "output": {"sample": {"event": "task.created", "task": {"id": 1}}},
                    "trigger": {
                        "type": "webhook",
                        "subscribe": {"method": "POST", "path": hooks},
                        "unsubscribe": {"method": "DELETE", "path": hooks + "/{id}", "content_type": "none"},
                        **secret,
                        "signature": {"header": "X-Fake-Signature", "secret": "{{subscription.secret}}"},
                    },
                }
            )
        (folder / "fake_hooks.json").write_text(json.dumps(hooks_app))

    server = fake_provider(edit=add_hooks_app)
    # The compilers and Test & Review read the catalogue too.
    monkeypatch.setattr(catalogue_module, "get_index", client.app.dependency_overrides[get_index])
    return server


def _account(client, headers, app_id: int = TOKEN_APP) -> int:
    return add_account(client, headers, app_id, {"api_key": fake_apps.API_KEY})


def trigger_canvas(account_id: Any, event: str = "new_task") -> dict[str, Any]:
    trigger = app_node(
        "node-1",
        "TriggerNode",
        (TOKEN_APP, "fake_token", "Fake Token App"),
        1,
        event={"id": event, "name": "New Task"},
        account={"id": account_id, "name": "Ada at Fake"},
        config=[],
        x=0,
    )
    action = api_call_node("https://api.example.com/notes", body=[{"key": "title", "value": "{{node-1.title}}"}])
    return {
        "flowName": "New tasks",
        "dataForSelect": {},
        "apps": [trigger, action],
        "links": [{"source": "node-1", "target": action["id"]}],
    }


def _test(client, headers, canvas, konnect_id=None):
    return client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": "node-1", "konnect_id": konnect_id, "canvas_json": canvas},
        headers=headers,
    )


def test_test_and_review_shows_the_newest_item_of_the_live_app(client, api, fake):
    headers = api.new_user()
    account_id = _account(client, headers)
    canvas = trigger_canvas(account_id)
    # No items yet: the manifest's sample (none here: {}) and a message saying so.
    r = _test(client, headers, canvas)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["test_status"] == "Success" and body["raw_response"] == {}
    assert body["display_message"].startswith("No Fake Token App items were found")
    assert fake.requests[-1]["path"] == "/tasks" and fake.requests[-1]["headers"]["X-Api-Key"] == fake_apps.API_KEY
    konnect_id = body["konnect_id"]

    fake.tasks += [{"id": 1, "title": "older"}, {"id": 2, "title": "newest"}]
    r = _test(client, headers, canvas, konnect_id)
    assert r.json()["test_status"] == "Success" and r.json()["raw_response"] == {"id": 2, "title": "newest"}
    assert "the newest of 2 item(s)" in r.json()["display_message"]
    assert fake_apps.API_KEY not in r.text

    # Published: the runner's polling trigger naming app, event and account (no credential).
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()
    assert edit["status"] == "Published"
    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import Konnect

    with get_sessionmaker()() as session:
        spec = session.get(Konnect, konnect_id).published_spec
    assert spec["trigger"]["kind"] == "polling"
    assert (spec["trigger"]["app_id"], spec["trigger"]["event"], spec["trigger"]["account_id"]) == (
        TOKEN_APP,
        "new_task",
        account_id,
    )
    assert fake_apps.API_KEY not in str(spec)


def test_a_trigger_test_takes_its_tokens_from_the_accounts_shared_budget(client, api, fake, nats_server):
    """The api's own requests with an account use the runners' bucket (KZ_BUDGETS) and the owner's
    override: two tests at 1 request/s are a second apart, and the bucket counted both."""
    headers = api.new_user()
    account_id = _account(client, headers)
    r = client.put(f"/api/v1/app_users/{account_id}/rate_budget", json={"rate_limit_rps": 1}, headers=headers)
    assert r.status_code == 200, r.text
    canvas = trigger_canvas(account_id)
    first = _test(client, headers, canvas)
    assert first.json()["test_status"] == "Success", first.text
    started = time.monotonic()
    second = _test(client, headers, canvas, first.json()["konnect_id"])
    assert second.json()["test_status"] == "Success", second.text
    assert time.monotonic() - started >= 0.9  # the second request waited for the next token

    async def stored() -> dict[str, Any]:
        nc = await nats.connect(nats_server.admin_url)
        try:
            kv = await nc.jetstream().key_value(KV_BUDGETS)
            return dict(json.loads((await kv.get(budget_key(account_id))).value))
        finally:
            await nc.close()

    state = asyncio.run(stored())
    assert state["rate"] == 1.0 and sum(state["recent"].values()) == 2
    budget = client.get(f"/api/v1/app_users/{account_id}/rate_budget", headers=headers).json()
    assert budget["source"] == "override" and budget["used_last_minute"] == 2


def test_a_trigger_test_that_fails_or_uses_anothers_account_is_an_error(client, api, fake):
    headers = api.new_user()
    other = api.new_user()
    theirs = _account(client, other)
    r = _test(client, headers, trigger_canvas(theirs))
    assert r.status_code == 200 and r.json()["test_status"] == "Error"
    assert r.json()["display_message"] == "Choose a Fake Token App account for this trigger"
    # The trigger was not tested successfully: the konnect cannot be saved.
    saved = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": r.json()["konnect_id"], "canvas_json": trigger_canvas(theirs), "canvas_name": True},
        headers=headers,
    )
    assert saved.status_code == 422

    mine = _account(client, headers)
    original = fake_apps.API_KEY
    try:
        fake_apps.API_KEY = "another-key-0123456789"  # the key was revoked after the account was added
        r = _test(client, headers, trigger_canvas(mine))
    finally:
        fake_apps.API_KEY = original
    assert r.status_code == 200 and r.json()["test_status"] == "Error"
    assert "HTTP 401" in r.json()["display_message"] and original not in r.text
    # Hostile account ids are refused, not a 500.
    for bad in ("99999999999999999999999", "abc", None):
        r = _test(client, headers, trigger_canvas(bad))
        assert r.status_code in (200, 422), r.text
        assert r.json()["test_status"] == "Error"


def test_an_app_webhook_the_app_refuses_is_not_published(client, api, fake):
    headers = api.new_user()
    canvas = trigger_canvas(_account(client, headers, HOOKS_APP), event="task_event")
    canvas["apps"][0]["data"]["app_detail"].update(id=HOOKS_APP, provider="fake_hooks", name="Fake Hooks App")
    tested = _test(client, headers, canvas).json()
    assert tested["test_status"] == "Success" and tested["raw_response"] == {"event": "task.created", "task": {"id": 1}}
    assert tested["display_message"].startswith("Publishing subscribes this konnect at Fake Hooks App")
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": tested["konnect_id"], "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert r.status_code == 422, r.text
    assert r.json()["message"].startswith("Fake Hooks App refused the webhook subscription")
    assert fake.requests[-1]["path"] == "/webhooks" and len(fake.requests[-1]["body"]["secret"]) == 64
    assert client.get(f"/api/v1/konnects/{tested['konnect_id']}/edit", headers=headers).json()["status"] == "Draft"


def test_a_subscription_the_app_made_without_a_secret_is_removed_there(client, api, fake):
    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import AppWebhookSubscription

    headers = api.new_user()
    canvas = trigger_canvas(_account(client, headers, HOOKS_APP), event="task_event_no_secret")
    canvas["apps"][0]["data"]["app_detail"].update(id=HOOKS_APP, provider="fake_hooks", name="Fake Hooks App")
    tested = _test(client, headers, canvas).json()
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": tested["konnect_id"], "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert r.status_code == 422, r.text
    assert r.json()["message"] == "Fake Hooks App gave no signing secret for its webhook"
    calls = [(c["method"], c["path"]) for c in fake.requests[-2:]]
    assert calls == [("POST", "/hooks-without-secret"), ("DELETE", "/hooks-without-secret/hook-7")]
    with get_sessionmaker()() as s:
        assert s.get(AppWebhookSubscription, tested["konnect_id"]) is None
    assert client.get(f"/api/v1/konnects/{tested['konnect_id']}/edit", headers=headers).json()["status"] == "Draft"


def test_the_webhook_secret_door_is_scoped(client, api):
    from konnectz_contracts.broker_token import konnect_token

    url = "/api/v1/internal/webhook_secret"
    # The token of konnect 5 and of the Konnect resource recorded for it: another test of the same
    # process (test_app_accounts) may have made konnect 5, with a resource uid.
    with get_sessionmaker()() as session:
        konnect = session.get(Konnect, 5)
        uid = (konnect.resource_uid if konnect is not None else None) or ""
    token = konnect_token(get_settings().runner_credentials_key, 5, uid)
    assert client.post(url, json={"konnect_id": 5}).status_code == 401
    assert client.post(url, json={"konnect_id": 5}, headers={"Authorization": "Bearer nope"}).status_code == 401
    # A konnect without an app webhook subscription: nothing to give.
    assert client.post(url, json={"konnect_id": 5}, headers={"Authorization": f"Bearer {token}"}).status_code == 404
    for bad in (2**64, 0, "x", None):
        assert (
            client.post(url, json={"konnect_id": bad}, headers={"Authorization": f"Bearer {token}"}).status_code == 422
        )
