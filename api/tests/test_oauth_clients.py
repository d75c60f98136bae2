"""OAuth apps entered in the UI: stored encrypted, never returned, used for the flow; the access rule
(administrators are named by the installer, never inferred: KONNECTZ_ADMIN_EMAILS or the admin command); the
environment variable winning; an OAuth2 app's second method (a pasted token). Against the local fake
provider of ``konnectz_devstack.fake_apps`` (an http.server with /authorize and /token)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from sqlalchemy import delete, update

from konnectz_api.core.config import Settings, get_settings
from konnectz_api.crud import oauth_clients
from konnectz_api.crud.users import find_user_by_email
from konnectz_api.db import get_sessionmaker
from konnectz_api.deps import app_settings
from konnectz_api.models import OAuthClientConfig, User
from konnectz_api.services.credential_broker import cipher
from konnectz_devstack import fake_apps
from konnectz_runner.apps import parse_networks

OAUTH_APP, TOKEN_APP = 900002, 900001
REDIRECT = "http://app.test/oauth/response"
MASK = "••••••"


def _settings(env_clients: dict) -> object:
    return get_settings().model_copy(
        update={"allow_private_networks": parse_networks("127.0.0.0/8"), "oauth_clients": env_clients}
    )


def _forget_stored() -> None:
    with get_sessionmaker()() as session:
        session.execute(delete(OAuthClientConfig).where(OAuthClientConfig.app_key == "fake_oauth"))
        session.commit()


@pytest.fixture
def fake(fake_provider):
    """The fake provider; its OAuth2 app also takes a pasted token; no client in the environment."""

    def add_token_method(folder: Path) -> None:
        manifest = folder / "fake_oauth.json"
        app = json.loads(manifest.read_text())
        app["auth"]["token_method"] = {
            "label": "Personal access token",
            "fields": [{"key": "access_token", "label": "Personal access token", "help": "Settings > Tokens"}],
        }
        manifest.write_text(json.dumps(app))

    server = fake_provider(oauth_clients={}, edit=add_token_method)
    _forget_stored()
    yield server
    _forget_stored()


def _admin(api) -> dict[str, str]:
    email = api.signup_and_verify()
    with get_sessionmaker()() as session:
        session.execute(update(User).where(User.email == email).values(is_admin=True))
        session.commit()
    return api.login(email)


def _authorize(client, headers, fake) -> dict:
    reply = client.post("/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT}, headers=headers)
    assert reply.status_code == 200, reply.text
    assert reply.json()["type"] == "oauth"
    url = reply.json()["auth_url"]
    assert parse_qs(urlparse(url).query)["client_id"] == [fake_apps.CLIENT_ID] and fake_apps.CLIENT_SECRET not in url
    consent = httpx.get(url, follow_redirects=False)
    assert consent.status_code == 302 and consent.headers["location"].startswith(REDIRECT)
    return {k: v[0] for k, v in parse_qs(urlparse(consent.headers["location"]).query).items()}


def _accounts(client, headers) -> list[dict]:
    r = client.get(f"/api/v1/apps/{OAUTH_APP}/authorized_app_accounts", headers=headers)
    return r.json()["authorized_app_accounts"]


def test_an_admin_enters_the_client_it_is_stored_encrypted_masked_and_used(client, api, fake):
    admin, user = _admin(api), api.new_user()
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"

    # Not configured: every message says what to do.
    status = client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=admin).json()
    assert status == {
        "app_id": OAUTH_APP,
        "app_key": "fake_oauth",
        "configured": False,
        "source": None,
        "client_id": None,
        "client_secret": None,
        "redirect_url": REDIRECT,
        "can_configure": True,
        "who_can_configure": HOW,
        "token_method": "Personal access token",
    }
    refused = client.post("/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT}, headers=user)
    message = refused.json()["message"]
    assert refused.status_code == 400 and "not configured for OAuth2" in message
    assert "Manage Accounts" in message and "KONNECTZ_OAUTH_CLIENTS" in message and '"fake_oauth"' in message
    assert "personal access token instead" in message

    # The first save needs the secret.
    assert client.put(url, json={"client_id": fake_apps.CLIENT_ID}, headers=admin).status_code == 400
    saved = client.put(
        url, json={"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}, headers=admin
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["client_secret"] == MASK and saved.json()["source"] == "settings"
    assert saved.json()["client_id"] == fake_apps.CLIENT_ID and fake_apps.CLIENT_SECRET not in saved.text
    with get_sessionmaker()() as session:
        row = session.get(OAuthClientConfig, "fake_oauth")
        assert fake_apps.CLIENT_SECRET not in row.client_secret
        assert cipher(get_settings()).decrypt(row.client_secret) == {"client_secret": fake_apps.CLIENT_SECRET}
    # Others see that it is configured, not the client.
    seen = client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=user).json()
    assert seen["configured"] and not seen["can_configure"]
    assert seen["client_id"] is None and seen["client_secret"] is None

    # The flow completes with the stored client (the fake's /token checks id and secret), the account is listed.
    back = _authorize(client, user, fake)
    r = client.post(
        "/api/v1/authorization",
        json={"app_id": OAUTH_APP, "redirect_url": REDIRECT, "auth_response": back},
        headers=user,
    )
    assert r.status_code == 200, r.text
    assert [a["name"] for a in _accounts(client, user)] == ["Ada at Fake"]
    token_form = next(q["body"] for q in fake.requests if q["path"] == "/token")
    assert token_form["client_secret"] == fake_apps.CLIENT_SECRET

    # Sending the mask back keeps the secret; a new secret replaces it.
    kept = client.put(url, json={"client_id": fake_apps.CLIENT_ID, "client_secret": MASK}, headers=admin)
    assert kept.status_code == 200
    with get_sessionmaker()() as session:
        found = oauth_clients.resolve(session, get_settings(), "fake_oauth", cipher=cipher(get_settings()))
        assert found is not None and found.client_secret == fake_apps.CLIENT_SECRET
    client.put(url, json={"client_id": fake_apps.CLIENT_ID, "client_secret": "wrong"}, headers=admin)
    back = _authorize(client, user, fake)
    bad = client.post("/api/v1/authorization", json={"app_id": OAUTH_APP, "auth_response": back}, headers=user)
    assert bad.status_code == 400 and "wrong" not in bad.text

    # Removed: not configured again.
    gone = client.delete(url, headers=admin)
    assert gone.status_code == 200 and gone.json()["configured"] is False
    assert (
        client.post("/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT}, headers=user).status_code
        == 400
    )


def test_only_an_administrator_configures_oauth_clients(client, api, fake):
    user = api.new_user()  # a verified account holder that the installer did not name
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"
    body = {"client_id": "x", "client_secret": "y"}
    assert client.put(url, json=body, headers=user).status_code == 403
    assert client.delete(url, headers=user).status_code == 403
    # Refused before the body is read: an empty body is a 403 too, not a 422.
    assert client.put(url, json={}, headers=user).status_code == 403
    assert client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=user).json()["can_configure"] is False
    # Token apps have no OAuth client.
    admin = _admin(api)
    assert client.put(f"/api/v1/admin/oauth_clients/{TOKEN_APP}", json=body, headers=admin).status_code == 400


HOW = (
    "Only an administrator can configure OAuth apps. The installer names administrators with "
    "KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant <email>`."
)


def _naming(client, *emails: str) -> None:
    """The api as if the installer had set KONNECTZ_ADMIN_EMAILS to ``emails`` (comma-separated, any case)."""
    settings = get_settings().model_copy(
        update={"admin_emails": Settings(admin_emails=",".join(emails)).admin_emails, "oauth_clients": {}}
    )
    client.app.dependency_overrides[app_settings] = lambda: settings


def test_without_a_named_administrator_the_admin_routes_say_how_to_become_one(client, api, fake):
    """A verified account holder that nobody named is refused, and told how an administrator is named."""
    user = api.new_user()
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"
    for reply in (
        client.put(url, json={"client_id": "x", "client_secret": "y"}, headers=user),
        client.delete(url, headers=user),
    ):
        assert reply.status_code == 403 and reply.json()["message"] == HOW
    status = client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=user).json()
    assert status["can_configure"] is False and status["who_can_configure"] == HOW
    assert client.get("/api/v1/users/profile", headers=user).json()["is_admin"] is False
    with get_sessionmaker()() as session:
        assert session.get(OAuthClientConfig, "fake_oauth") is None


def test_a_verified_user_named_by_konnectz_admin_emails_configures(client, api, fake):
    email = api.signup_and_verify()
    headers = api.login(email)
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"
    body = {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}
    assert client.put(url, json=body, headers=headers).status_code == 403
    _naming(client, "someone-else@example.com", f"  {email.upper()} ")  # case and spaces do not matter
    saved = client.put(url, json=body, headers=headers)
    assert saved.status_code == 200 and saved.json()["can_configure"] is True, saved.text
    assert client.get("/api/v1/users/profile", headers=headers).json()["is_admin"] is True
    assert client.delete(url, headers=headers).status_code == 200
    # Named administrators assign plans too.
    plan = client.post("/api/v1/admin/users/plan", json={"email": email, "plan": "Team"}, headers=headers)
    assert plan.status_code == 200, plan.text
    _naming(client)  # the installer takes the name off the list: the power goes with it
    assert client.put(url, json=body, headers=headers).status_code == 403


def test_an_unverified_sign_up_changes_no_administrator(client, api, fake):
    """The named owner keeps the power when someone else signs up; an unverified sign-up is never an
    administrator, even with an e-mail on the list (it cannot sign in, and the rule refuses it anyway)."""
    owner = api.signup_and_verify()
    stranger = f"stranger-{owner}"
    _naming(client, owner, stranger)
    headers = api.login(owner)
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"
    body = {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}
    assert client.put(url, json=body, headers=headers).status_code == 200
    signup = {"email": stranger, "first_name": "S", "password": "s3cret-pass", "password_confirmation": "s3cret-pass"}
    assert client.post("/api/v1/signup", json=signup).status_code == 201
    assert client.put(url, json=body, headers=headers).status_code == 200
    assert client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=headers).json()["can_configure"] is True
    settings = client.app.dependency_overrides[app_settings]()
    with get_sessionmaker()() as session:
        unverified = find_user_by_email(session, email=stranger)
        assert unverified is not None and unverified.email_verified_at is None
        assert not oauth_clients.can_configure(unverified, settings)
        unverified.is_admin = True  # not even granted
        assert not oauth_clients.can_configure(unverified, settings)
        session.rollback()


def test_the_first_sign_up_of_an_open_install_is_not_an_administrator(client):
    """Being the first, the only account holder of an install makes no administrator; neither does a
    team member's or sub-account's absence. Only the installer's naming does."""
    nobody = get_settings().model_copy(update={"admin_emails": frozenset()})
    named = get_settings().model_copy(update={"admin_emails": frozenset({"owner@single.test"})})
    with get_sessionmaker()() as session:
        session.execute(delete(User))  # rolled back below: the install as if it had no user yet
        owner = User(email="Owner@single.test", password_hash="x", email_verified_at=datetime.now(UTC))
        session.add(owner)
        session.flush()
        assert not oauth_clients.can_configure(owner, nobody)
        assert oauth_clients.can_configure(owner, named)
        owner.email_verified_at = None
        assert not oauth_clients.can_configure(owner, named)  # unverified: never, even named
        session.rollback()


def test_the_environment_variable_wins(client, api, fake):
    admin = _admin(api)
    with get_sessionmaker()() as session:
        oauth_clients.save(
            session,
            app_key="fake_oauth",
            client_id="stored-id",
            client_secret="stored-secret",
            cipher=cipher(get_settings()),
            user_id=None,
        )
    env = {"fake_oauth": {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}}
    client.app.dependency_overrides[app_settings] = lambda: _settings(env)
    status = client.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=admin).json()
    assert status["source"] == "environment" and status["client_id"] == fake_apps.CLIENT_ID
    r = client.put(
        f"/api/v1/admin/oauth_clients/{OAUTH_APP}", json={"client_id": "a", "client_secret": "b"}, headers=admin
    )
    assert r.status_code == 409 and "KONNECTZ_OAUTH_CLIENTS" in r.json()["message"]
    user = api.new_user()
    back = _authorize(client, user, fake)  # asserts the environment's client id
    r = client.post("/api/v1/authorization", json={"app_id": OAUTH_APP, "auth_response": back}, headers=user)
    assert r.status_code == 200, r.text


def test_an_oauth_app_connects_with_a_pasted_token_without_an_oauth_client(client, api, fake):
    user = api.new_user()
    fields = client.post(
        "/api/v1/auth-url", json={"app_id": OAUTH_APP, "redirect_url": REDIRECT, "method": "token"}, headers=user
    )
    assert fields.status_code == 200, fields.text
    assert fields.json()["type"] == "token" and fields.json()["fields"] == [
        {
            "id": "access_token",
            "name": "Personal Access Token",
            "instructions": "Settings > Tokens",
            "secret": True,
            "required": True,
        }
    ]
    body = {"app_id": OAUTH_APP, "method": "token"}
    wrong = client.post("/api/v1/authorization", json={**body, "auth_response": {"access_token": "nope"}}, headers=user)
    assert wrong.status_code == 400 and "nope" not in wrong.text
    unknown = client.post("/api/v1/authorization", json={**body, "auth_response": {"code": "x"}}, headers=user)
    assert unknown.status_code == 400 and "Unknown fields" in unknown.json()["message"]
    token = fake.issue()["access_token"]
    ok = client.post("/api/v1/authorization", json={**body, "auth_response": {"access_token": token}}, headers=user)
    assert ok.status_code == 200, ok.text
    assert [a["name"] for a in _accounts(client, user)] == ["Ada at Fake"]
    # The account works like an OAuth one (the same injection); a revoked token asks to connect again,
    # it does not ask for an OAuth client.
    account_id = ok.json()["app_user_id"]
    base = f"/api/v1/apps/{OAUTH_APP}/app_events/create_task/event_config/right"
    r = client.get(f"{base}/project/details?app_account_id={account_id}", headers=user)
    assert r.status_code == 200 and len(r.json()["options"]) == 2, r.text
    fake.tokens.clear()
    r = client.get(f"{base}/project/details?app_account_id={account_id}", headers=user)
    assert "connect the account again" in r.text and "not configured" not in r.text
    # A token app has no second method.
    r = client.post("/api/v1/auth-url", json={"app_id": TOKEN_APP, "method": "token"}, headers=user)
    assert r.json()["type"] == "token"


def test_the_admin_command_grants_revokes_and_lists(client, api, fake, capsys, monkeypatch):
    from konnectz_api.cli import main

    email = api.signup_and_verify()
    headers = api.login(email)
    status = f"/api/v1/apps/{OAUTH_APP}/oauth_client"
    url = f"/api/v1/admin/oauth_clients/{OAUTH_APP}"
    body = {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}
    assert client.get(status, headers=headers).json()["can_configure"] is False
    assert main(["admin", "grant", email.upper()]) == 0
    assert capsys.readouterr().out == f"{email}: administrator\n"
    assert client.get(status, headers=headers).json()["can_configure"] is True
    assert client.put(url, json=body, headers=headers).status_code == 200
    # An administrator named on KONNECTZ_ADMIN_EMAILS who never signed up yet, and the grant: both listed.
    named = f"named-{email}"
    monkeypatch.setenv("KONNECTZ_ADMIN_EMAILS", f"{named.upper()}, {email}")
    get_settings.cache_clear()
    try:
        assert main(["admin", "list"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert f"{email}\tgranted, KONNECTZ_ADMIN_EMAILS\tadministrator" in lines
        assert f"{named}\tKONNECTZ_ADMIN_EMAILS\tnot yet: no user with this e-mail yet" in lines
        assert main(["admin", "revoke", email]) == 0
        assert capsys.readouterr().out == f"{email}: administrator (still named by KONNECTZ_ADMIN_EMAILS)\n"
    finally:
        monkeypatch.delenv("KONNECTZ_ADMIN_EMAILS")
        get_settings.cache_clear()
    assert main(["admin", "list"]) == 0
    assert email not in capsys.readouterr().out
    assert client.get(status, headers=headers).json()["can_configure"] is False
    assert client.delete(url, headers=headers).status_code == 403
    assert main(["admin", "grant", "nobody@example.invalid"]) == 1
    assert "No user with e-mail nobody@example.invalid" in capsys.readouterr().err
