"""App accounts against a real local fake app: token fields, OAuth2 with PKCE, refresh, options."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from sqlalchemy import select

from konnectz_api.core.config import get_settings
from konnectz_api.db import get_sessionmaker
from konnectz_api.deps import app_settings
from konnectz_api.models import AppAccount
from konnectz_devstack import fake_apps
from konnectz_devstack.testing import add_account

TOKEN_APP, OAUTH_APP = 900001, 900002
REDIRECT = "http://app.test/oauth/response/900002/tok"


@pytest.fixture
def fake(fake_provider):
    return fake_provider(
        oauth_clients={"fake_oauth": {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}}
    )


def _accounts(client, headers, app_id=TOKEN_APP):
    return client.get(f"/api/v1/apps/{app_id}/authorized_app_accounts", headers=headers).json()[
        "authorized_app_accounts"
    ]


def test_token_account_lifecycle(client, api, fake):
    headers = api.new_user()
    fields = client.post("/api/v1/auth-url", json={"app_id": TOKEN_APP, "redirect_url": ""}, headers=headers).json()
    assert fields["type"] == "token" and fields["auth_url"] is None
    assert fields["fields"] == [
        {"id": "api_key", "name": "Api Key", "instructions": "Settings > API", "secret": True, "required": True}
    ]
    # The test request must pass before an account is saved.
    bad = client.post(
        "/api/v1/authorization", json={"app_id": TOKEN_APP, "auth_response": {"api_key": "wrong-key"}}, headers=headers
    )
    assert bad.status_code == 400 and "401" in bad.json()["message"] and "wrong-key" not in bad.text
    assert _accounts(client, headers) == []
    empty = client.post("/api/v1/authorization", json={"app_id": TOKEN_APP, "auth_response": {}}, headers=headers)
    assert empty.status_code == 400 and empty.json()["message"] == "Please fill Api Key"
    ok = client.post(
        "/api/v1/authorization",
        json={"app_id": TOKEN_APP, "auth_response": {"api_key": fake_apps.API_KEY}},
        headers=headers,
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["status"] == "Account added successfully" and ok.json()["name"] == "Ada at Fake"
    assert fake.requests[-1]["headers"]["X-Api-Key"] == fake_apps.API_KEY
    account_id = ok.json()["app_user_id"]
    listed = _accounts(client, headers)
    assert [(a["id"], a["name"]) for a in listed] == [(account_id, "Ada at Fake")]
    assert (
        fake_apps.API_KEY not in client.get(f"/api/v1/apps/{TOKEN_APP}/authorized_app_accounts", headers=headers).text
    )
    # Encrypted at rest, with a key id.
    with get_sessionmaker()() as session:
        stored = session.scalar(select(AppAccount.credentials).where(AppAccount.id == account_id))
    assert fake_apps.API_KEY not in stored and stored.split(":", 1)[0].isalnum()
    # account_count in the catalogue.
    found = client.get("/api/v1/apps?search_query=fake token", headers=headers).json()["apps"]
    assert found[0]["account_count"] == 1
    # Rename; another user can neither see, rename nor remove it.
    r = client.post(f"/api/v1/app_users/{account_id}/update_label", json={"label": "Work"}, headers=headers)
    assert r.json() == {"message": "SUCCESS"}
    assert _accounts(client, headers)[0]["name"] == "Work"
    other = api.new_user()
    assert _accounts(client, other) == []
    assert (
        client.post(f"/api/v1/app_users/{account_id}/update_label", json={"label": "x"}, headers=other).status_code
        == 404
    )
    assert (
        client.post(
            f"/api/v1/app_users/{account_id}/update_status", json={"status": "REMOVE"}, headers=other
        ).status_code
        == 404
    )
    # Hostile input.
    assert (
        client.post(
            f"/api/v1/app_users/{account_id}/update_label", json={"label": "a\x00"}, headers=headers
        ).status_code
        == 422
    )
    assert (
        client.post(
            "/api/v1/app_users/99999999999999999999/update_label", json={"label": "x"}, headers=headers
        ).status_code
        == 422
    )
    assert (
        client.post(
            f"/api/v1/app_users/{account_id}/update_status", json={"status": "DELETE"}, headers=headers
        ).status_code
        == 422
    )

    # Remove: refused while a published konnect uses it, allowed after unpublishing.
    canvas = api.canvas()
    canvas["apps"][1]["data"]["selectedAccount"] = {"id": account_id, "name": "Work"}
    published = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": api.test_trigger(headers, canvas), "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    )
    assert published.status_code == 200, published.text
    refused = client.post(f"/api/v1/app_users/{account_id}/update_status", json={"status": "REMOVE"}, headers=headers)
    assert refused.status_code == 409
    assert refused.json() == {
        "message": "FAILURE",
        "details": "Cannot delete this account as it contains active Konnectz",
    }
    konnect_id = published.json()["konnect_id"]
    r = client.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200, r.text
    removed = client.post(f"/api/v1/app_users/{account_id}/update_status", json={"status": "REMOVE"}, headers=headers)
    assert removed.json()["message"] == "SUCCESS"
    assert _accounts(client, headers) == []


def test_dynamic_options_through_the_account(client, api, fake):
    headers = api.new_user()
    account_id = add_account(client, headers, TOKEN_APP, {"api_key": fake_apps.API_KEY})
    base = f"/api/v1/apps/{TOKEN_APP}/app_events/create_task/event_config/right"
    r = client.get(f"{base}/project/details?app_account_id={account_id}&prevSequence=0", headers=headers)
    assert r.status_code == 200, r.text
    assert r.json() == {"config_key": "project", "options": [{"id": "1", "name": "Launch"}, {"id": "2", "name": "Ops"}]}
    # The next field depends on the first: its value goes into the source event's path.
    r = client.get(f"{base}/list/details?app_account_id={account_id}&prevSequence=1&project=2", headers=headers)
    assert r.json()["options"] == [{"id": "2-a", "name": "Todo of 2"}]
    assert client.get(f"{base}/list/details?app_account_id={account_id}", headers=headers).status_code == 400
    # Without an account, or with another user's account.
    assert client.get(f"{base}/project/details", headers=headers).json()["message"] == (
        "App events linked with this app couldn't be found! Please Authorize it."
    )
    assert client.get(f"{base}/project/details?app_account_id={account_id}", headers=api.new_user()).status_code == 404
    assert client.get(f"{base}/project/fetch-fields?app_account_id={account_id}", headers=headers).json() == {
        "fields": []
    }


def _authorize(client, headers, fake) -> dict:
    reply = client.post(
        "/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT}, headers=headers
    ).json()
    assert reply["type"] == "oauth"
    query = parse_qs(urlparse(reply["auth_url"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["scope"] == ["read write"]
    assert query["client_id"] == [fake_apps.CLIENT_ID] and fake_apps.CLIENT_SECRET not in reply["auth_url"]
    # The browser follows the consent page; the provider redirects back with code and state.
    consent = httpx.get(reply["auth_url"], follow_redirects=False)
    assert consent.status_code == 302 and consent.headers["location"].startswith(REDIRECT)
    back = {k: v[0] for k, v in parse_qs(urlparse(consent.headers["location"]).query).items()}
    return back


def test_oauth2_authorization_code_with_pkce_and_refresh(client, api, fake):
    headers = api.new_user()
    back = _authorize(client, headers, fake)
    r = client.post(
        "/api/v1/authorization",
        json={"app_id": OAUTH_APP, "redirect_url": REDIRECT, "auth_response": back},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    account_id = r.json()["app_user_id"]
    assert r.json()["name"] == "Ada at Fake"
    token_form = next(q["body"] for q in fake.requests if q["path"] == "/token")
    assert token_form["code_verifier"] and token_form["redirect_uri"] == REDIRECT
    # A state works once.
    again = client.post("/api/v1/authorization", json={"app_id": OAUTH_APP, "auth_response": back}, headers=headers)
    assert again.status_code == 400 and "expired or was already used" in again.json()["message"]
    # Another user cannot complete someone else's authorisation.
    back2 = _authorize(client, headers, fake)
    stolen = client.post(
        "/api/v1/authorization", json={"app_id": OAUTH_APP, "auth_response": back2}, headers=api.new_user()
    )
    assert stolen.status_code == 400
    forged = client.post(
        "/api/v1/authorization",
        json={"app_id": OAUTH_APP, "auth_response": {"code": "x", "state": "forged"}},
        headers=headers,
    )
    assert forged.status_code == 400
    # redirect_url must be a page of the product.
    evil = client.post(
        "/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": "https://evil.test/x"}, headers=headers
    )
    assert evil.status_code == 400

    # The access token expires: the next use refreshes it first (the api is the credential broker).
    fake.tokens.clear()  # every access token the provider issued is now invalid
    with get_sessionmaker()() as session:
        account = session.get(AppAccount, account_id)
        account.token_expires_at = datetime.now(UTC) - timedelta(seconds=1)
        session.commit()
    base = f"/api/v1/apps/{OAUTH_APP}/app_events/create_task/event_config/right"
    r = client.get(f"{base}/project/details?app_account_id={account_id}", headers=headers)
    assert r.status_code == 200, r.text
    assert len(r.json()["options"]) == 2
    assert [q["body"]["grant_type"] for q in fake.requests if q["path"] == "/token"] == [
        "authorization_code",
        "refresh_token",
    ]
    # A 401 although the expiry time says valid: refresh and retry once.
    fake.tokens.clear()
    r = client.get(f"{base}/project/details?app_account_id={account_id}", headers=headers)
    assert r.status_code == 200, r.text
    grants = [q["body"]["grant_type"] for q in fake.requests if q["path"] == "/token"]
    assert grants == ["authorization_code", "refresh_token", "refresh_token"]


def test_oauth_app_without_client_configuration(client, api, fake):
    headers = api.new_user()
    settings = client.app.dependency_overrides[app_settings]().model_copy(update={"oauth_clients": {}})
    client.app.dependency_overrides[app_settings] = lambda: settings
    r = client.post("/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT}, headers=headers)
    assert r.status_code == 400 and "not configured for OAuth2" in r.json()["message"]


def test_runner_credentials_are_scoped_to_a_konnect(client, api, fake):
    from konnectz_contracts.broker_token import konnect_token

    headers = api.new_user()
    back = _authorize(client, headers, fake)
    account_id = add_account(client, headers, OAUTH_APP, back)
    other_account = add_account(client, headers, TOKEN_APP, {"api_key": fake_apps.API_KEY})
    canvas = api.canvas()
    canvas["apps"][1]["data"]["selectedAccount"] = {"id": account_id, "name": "Fake"}
    konnect_id = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": api.test_trigger(headers, canvas), "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    ).json()["konnect_id"]
    secret = get_settings().runner_credentials_key
    token = konnect_token(secret, konnect_id, "")
    url = "/api/v1/internal/credentials"
    r = client.post(
        url, json={"account_id": account_id, "konnect_id": konnect_id}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 200, r.text
    first = r.json()["credentials"]["access_token"]
    assert first in fake.tokens
    # The runner saw an expired reply: it asks for a refreshed token.
    r = client.post(
        url,
        json={"account_id": account_id, "konnect_id": konnect_id, "refresh": True},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200 and r.json()["credentials"]["access_token"] != first
    # A token of another konnect, no token, or an account the konnect does not use: refused.
    wrong = konnect_token(secret, konnect_id + 1, "")
    assert (
        client.post(
            url, json={"account_id": account_id, "konnect_id": konnect_id}, headers={"Authorization": f"Bearer {wrong}"}
        ).status_code
        == 401
    )
    assert client.post(url, json={"account_id": account_id, "konnect_id": konnect_id}).status_code == 401
    r = client.post(
        url, json={"account_id": other_account, "konnect_id": konnect_id}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 403


def test_app_accounts_are_capped_by_the_plan(client, api, fake):
    from sqlalchemy import insert

    from konnectz_api.crud.quota import PLANS
    from konnectz_api.models import User

    email = api.signup_and_verify()
    headers = api.login(email)
    cap = PLANS["Free"].app_accounts
    with get_sessionmaker()() as session:
        owner_id = session.scalar(select(User.id).where(User.email == email))
        rows = [
            {"owner_id": owner_id, "app_id": TOKEN_APP, "app_key": "fake_token", "label": f"a{i}", "credentials": "x"}
            for i in range(cap - 1)
        ]
        session.execute(insert(AppAccount), rows)
        session.commit()
    body = {"app_id": TOKEN_APP, "auth_response": {"api_key": fake_apps.API_KEY}}
    assert client.post("/api/v1/authorization", json=body, headers=headers).status_code == 200
    over = client.post("/api/v1/authorization", json=body, headers=headers)
    assert over.status_code == 403 and over.json()["key"] == "PLAN_LIMIT"
    assert f"The Free plan allows {cap} app accounts" in over.json()["message"]
    assert len(_accounts(client, headers)) == cap


def test_rate_budget_override_validation_scoping_and_use(client, api, fake, nats_server):
    """The owner's rate override (docs/rate-budgets.md): bounds, owner scoping, the budget reply with
    its use read from KZ_BUDGETS, and the credential broker handing the override to the runners."""
    import asyncio
    import json
    import time

    import nats

    from konnectz_contracts.broker_token import konnect_token
    from konnectz_contracts.budgets import KV_BUDGETS, budget_key

    headers = api.new_user()
    account_id = add_account(client, headers, TOKEN_APP, {"api_key": fake_apps.API_KEY})
    url = f"/api/v1/app_users/{account_id}/rate_budget"
    first = client.get(url, headers=headers).json()
    # The fake app sets no rate: no budget until the owner sets one.
    assert first["source"] == "none" and first["rate_rps"] is None and first["rate_limit_rps"] is None
    assert _accounts(client, headers)[0]["rate_budget"]["source"] == "none"

    # Out of bounds, not a number, too large: a 422 that says why; nothing stored.
    for bad in (0, 0.001, -1, 1000.5, 1e308, "fast", [1]):
        r = client.put(url, json={"rate_limit_rps": bad}, headers=headers)
        assert r.status_code == 422, (bad, r.text)
    r = client.put(url, json={"rate_limit_rps": 5000}, headers=headers)
    assert "between 0.01 and 1000" in r.text
    for raw in ('{"rate_limit_rps": NaN}', '{"rate_limit_rps": Infinity}'):
        r = client.put(url, content=raw, headers={**headers, "Content-Type": "application/json"})
        assert r.status_code == 422, (raw, r.text)
    assert client.get(url, headers=headers).json()["rate_limit_rps"] is None

    r = client.put(url, json={"rate_limit_rps": 2.5}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["rate_limit_rps"] == 2.5 and r.json()["rate_rps"] == 2.5 and r.json()["source"] == "override"
    assert r.json()["live"] is True and r.json()["used_last_minute"] == 0 and r.json()["tokens_left"] == 1.0

    # Another user can neither read nor set it; an unknown account is a 404.
    other = api.new_user()
    assert client.get(url, headers=other).status_code == 404
    assert client.put(url, json={"rate_limit_rps": 9}, headers=other).status_code == 404
    assert client.get("/api/v1/app_users/99999999999/rate_budget", headers=headers).status_code == 404
    assert client.get(url, headers=headers).json()["rate_limit_rps"] == 2.5

    # The use the runners stored in KZ_BUDGETS: 3 requests this minute, 0.5 token left.
    now = time.time()

    async def store() -> None:
        nc = await nats.connect(nats_server.admin_url)
        try:
            kv = await nc.jetstream().key_value(KV_BUDGETS)
            value = {"tokens": 0.5, "updated_at": now, "rate": 2.5, "burst": 1, "recent": {str(int(now) - 1): 3}}
            await kv.put(budget_key(account_id), json.dumps(value).encode())
        finally:
            await nc.close()

    asyncio.run(store())
    shown = client.get(url, headers=headers).json()
    assert shown["used_last_minute"] == 3 and 0.5 <= shown["tokens_left"] <= 1.0
    assert _accounts(client, headers)[0]["rate_budget"]["used_last_minute"] == 3

    # The credential broker hands the override (and the account's name) to a runner of a konnect using it.
    canvas = api.canvas()
    canvas["apps"][1]["data"]["selectedAccount"] = {"id": account_id, "name": "Fake"}
    konnect_id = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": api.test_trigger(headers, canvas), "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    ).json()["konnect_id"]
    token = konnect_token(get_settings().runner_credentials_key, konnect_id, "")
    r = client.post(
        "/api/v1/internal/credentials",
        json={"account_id": account_id, "konnect_id": konnect_id},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["rate_limit_rps"] == 2.5 and r.json()["account_name"] == "Ada at Fake"

    # Cleared: back to the app's own rate (none here).
    cleared = client.put(url, json={"rate_limit_rps": None}, headers=headers).json()
    assert cleared["rate_limit_rps"] is None and cleared["source"] == "none"


def test_the_broker_refuses_a_token_minted_for_a_copy_of_the_konnect_resource_or_another_konnect(client, api, fake):
    """Kubernetes: the broker token is bound to the konnect id and the UID of the Konnect the api
    recorded for the flow (konnects.resource_uid). The operator mints a token for any Konnect it
    renders, a copy under another name included: that token (another UID) opens nothing, nor does
    a token copied from another flow's runner Secret. The victim's credentials never leave the api."""
    from sqlalchemy import update

    from konnectz_api.models import Konnect
    from konnectz_contracts.broker_token import konnect_token

    headers = api.new_user()
    account_id = add_account(client, headers, TOKEN_APP, {"api_key": fake_apps.API_KEY})
    canvas = api.canvas()
    canvas["apps"][1]["data"]["selectedAccount"] = {"id": account_id, "name": "Fake"}
    victim = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": api.test_trigger(headers, canvas), "canvas_json": canvas, "canvas_name": True},
        headers=headers,
    ).json()["konnect_id"]
    attacker = api.test_trigger(api.new_user(), api.canvas())
    with get_sessionmaker()() as session:  # as the cluster sync records them on publish or import
        session.execute(update(Konnect).where(Konnect.id == victim).values(resource_uid="uid-victim"))
        session.execute(update(Konnect).where(Konnect.id == attacker).values(resource_uid="uid-attacker"))
        session.commit()
    key = get_settings().runner_credentials_key

    def ask(token: str, path: str = "credentials") -> httpx.Response:
        body: dict = {"konnect_id": victim}
        body.update({"account_id": account_id} if path == "credentials" else {"sealed": ["x"]})
        return client.post(f"/api/v1/internal/{path}", json=body, headers={"Authorization": f"Bearer {token}"})

    refused = {
        "a copy of the victim's Konnect (another UID)": konnect_token(key, victim, "uid-copy"),
        "no resource (the local deployer's token)": konnect_token(key, victim, ""),
        "another flow's runner Secret": konnect_token(key, attacker, "uid-attacker"),
        "another konnect with the victim's UID": konnect_token(key, attacker, "uid-victim"),
    }
    for what, token in refused.items():
        for path in ("credentials", "step_secrets", "webhook_secret"):
            r = ask(token, path)
            assert r.status_code == 401, (what, path, r.text)
            assert "copy of its resource" in r.json()["message"], r.text
            assert fake_apps.API_KEY not in r.text
    r = ask(konnect_token(key, victim, "uid-victim"))
    assert r.status_code == 200, r.text  # the victim's own runner
