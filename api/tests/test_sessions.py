import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from konnectz_api.core.config import get_settings


def _login(client, api, email, password="s3cret-pass"):
    body = {"email": email, "password": password, "rememberMe": False, "captcha": api.solved_captcha()}
    return client.post("/api/v1/auth/login", json=body)


def test_logout_revokes_only_that_token(client, api):
    email = api.signup_and_verify()
    first, second = api.login(email), api.login(email)
    assert client.post("/api/v1/users/logout", headers=first).json() == {"message": "Signed out"}
    r = client.get("/api/v1/users/profile", headers=first)
    assert r.status_code == 401 and r.json()["message"] == "Your session has expired. Please sign in again."
    assert client.post("/api/v1/users/logout", headers=first).status_code == 401
    assert client.get("/api/v1/users/profile", headers=second).status_code == 200
    assert client.post("/api/v1/users/logout").status_code == 401


def test_logout_everywhere_ends_every_token_issued_before_it(client, api):
    email = api.signup_and_verify()
    tokens = [api.login(email) for _ in range(3)]  # within the same second
    r = client.post("/api/v1/users/logout?everywhere=true", headers=tokens[0])
    assert r.status_code == 200 and r.json() == {"message": "Signed out everywhere"}
    for headers in tokens:
        assert client.get("/api/v1/users/profile", headers=headers).status_code == 401
        assert client.get("/api/v1/konnects", headers=headers).status_code == 401
    assert client.get("/api/v1/users/profile", headers=api.login(email)).status_code == 200


def test_password_change_ends_other_sessions_and_returns_a_new_token(client, api):
    email = api.signup_and_verify()
    other = api.login(email)
    mine = api.login(email)
    body = {"current_password": "s3cret-pass", "password": "n3w-password", "password_confirmation": "n3w-password"}
    r = client.post("/api/v1/users/change_password", json=body, headers=mine)
    assert r.status_code == 200 and r.json()["key"] == "UPDATE_SUCCESS"
    fresh = {"Authorization": f"Bearer {r.json()['auth_token']}"}
    assert client.get("/api/v1/users/profile", headers=other).status_code == 401
    assert client.get("/api/v1/users/profile", headers=mine).status_code == 401
    assert client.get("/api/v1/users/profile", headers=fresh).json()["email"] == email


@pytest.mark.parametrize("forged", ["Bearer x", "Bearer " + "a" * 5000, "Basic abc"])
def test_garbage_tokens_are_401(client, forged):
    assert client.get("/api/v1/users/profile", headers={"Authorization": forged}).status_code == 401


def test_huge_user_id_in_a_signed_token_is_401(client, api_env):
    from datetime import timedelta

    from konnectz_api.core.security import create_access_token

    for uid in (2**64, -(2**70), 0):
        token = create_access_token(user_id=uid, secret=api_env["KONNECTZ_SECRET_KEY"], lifetime=timedelta(minutes=5))
        r = client.get("/api/v1/users/profile", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401


@pytest.fixture
def clean_throttle():
    """The TestClient always signs in from one address: leave no failures behind for other tests."""
    from sqlalchemy import delete

    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import LoginThrottle

    def clear():
        with get_sessionmaker()() as s:
            s.execute(delete(LoginThrottle))
            s.commit()

    clear()
    yield clear
    clear()


def test_login_is_throttled_per_email_with_retry_after(client, api, clean_throttle):
    settings = get_settings()
    email = api.signup_and_verify()
    for _ in range(settings.login_max_failures_per_email):
        assert _login(client, api, email, "wrong-pass").status_code == 401
    # Even the right password is refused while the e-mail is blocked; the reply says how long.
    r = _login(client, api, email)
    assert r.status_code == 429
    wait = int(r.headers["Retry-After"])
    assert 0 < wait <= settings.login_window_seconds
    assert r.json()["message"] == f"Too many failed sign-in attempts. Try again in {wait} seconds."
    # Another e-mail from the same address is not blocked yet.
    other = api.signup_and_verify()
    assert _login(client, api, other).status_code == 200


def test_login_is_throttled_per_address(client, api, monkeypatch, clean_throttle):
    monkeypatch.setattr(get_settings(), "login_max_failures_per_address", 3)
    # Failures spread over different e-mails from one address add up.
    for i in range(3):
        assert _login(client, api, f"nobody{i}-{time.time_ns()}@example.com", "wrong-pass").status_code == 401
    r = _login(client, api, api.signup_and_verify())
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def test_a_sign_in_racing_a_password_change_gets_a_token_that_ends_with_it(client, api):
    """Sign-ins with the old password sent while the password changes: whichever of them the api accepted
    (it read the old password), their tokens are refused once the change is done, even in the same
    second (tokens carry the session version, not only an issue time)."""
    email = api.signup_and_verify()
    mine = api.login(email)
    captchas = [api.solved_captcha() for _ in range(6)]
    body = {"current_password": "s3cret-pass", "password": "n3w-password", "password_confirmation": "n3w-password"}

    def sign_in(captcha):
        r = client.post(
            "/api/v1/auth/login",
            json={"email": email, "password": "s3cret-pass", "rememberMe": False, "captcha": captcha},
        )
        return r.json().get("auth_token") if r.status_code == 200 else None

    with ThreadPoolExecutor(7) as pool:
        racing = [pool.submit(sign_in, c) for c in captchas[:3]]
        change = pool.submit(client.post, "/api/v1/users/change_password", json=body, headers=mine)
        racing += [pool.submit(sign_in, c) for c in captchas[3:]]
        tokens = [f.result() for f in racing]
        changed = change.result()
    assert changed.status_code == 200, changed.text
    issued = [t for t in tokens if t]
    assert issued, "no sign-in got through before the change: the race was not run"
    for token in issued:
        r = client.get("/api/v1/users/profile", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 401, "a token signed in with the old password outlived the change"
    fresh = {"Authorization": f"Bearer {changed.json()['auth_token']}"}
    assert client.get("/api/v1/users/profile", headers=fresh).status_code == 200
    assert client.get("/api/v1/konnects", headers=fresh).status_code == 200  # the read pool's check too


def test_a_password_reset_ends_tokens_issued_the_same_second(client, api):
    email = api.signup_and_verify()
    before = api.login(email)
    assert client.post("/api/v1/users/reset_password_email", json={"email": email}).status_code == 200
    (token,) = {m.group(1) for t in api.mail_to(email) if (m := re.search(r"/reset-password/(\S+)", t["text"]))}
    body = {"reset_password_token": token, "password": "n3w-password", "password_confirmation": "n3w-password"}
    assert client.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    assert client.get("/api/v1/users/profile", headers=before).status_code == 401
    assert client.get("/api/v1/konnects", headers=before).status_code == 401
    assert client.get("/api/v1/users/profile", headers=api.login(email, "n3w-password")).status_code == 200


def test_reset_mails_are_limited_per_address_and_per_client(client, api, monkeypatch, clean_throttle):
    email, other = api.signup_and_verify(), api.signup_and_verify()
    clean_throttle()
    settings = get_settings()
    monkeypatch.setattr(settings, "mail_max_per_email", 3)
    monkeypatch.setattr(settings, "mail_max_per_address", 6)
    sent_before = len(api.mail_to(email))
    for _ in range(3):
        assert client.post("/api/v1/users/reset_password_email", json={"email": email}).status_code == 200
    r = client.post("/api/v1/users/reset_password_email", json={"email": email})
    assert r.status_code == 429 and r.json()["key"] == "TOO_MANY_MAILS", r.text
    wait = int(r.headers["Retry-After"])
    assert 0 < wait <= settings.mail_window_seconds
    assert r.json()["message"] == (
        f"Too many e-mails were requested for this address or from this client. Try again in {wait} seconds."
    )
    assert len(api.mail_to(email)) == sent_before + 3  # the refused request sent nothing
    # Per client: other addresses (unknown ones count too) from the same client add up to its limit.
    for i in range(2):
        assert client.post("/api/v1/users/reset_password_email", json={"email": f"x{i}@example.com"}).status_code == 404
    assert client.post("/api/v1/users/reset_password_email", json={"email": other}).status_code == 200
    r = client.post("/api/v1/users/reset_password_email", json={"email": other})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    # Verification mails (sign-up) share the client's limit.
    r = client.post(
        "/api/v1/signup",
        json={
            "email": f"late-{time.time_ns()}@example.com",
            "first_name": "L",
            "last_name": "L",
            "password": "s3cret-pass",
            "password_confirmation": "s3cret-pass",
            "is_admin": False,
        },
    )
    assert r.status_code == 429 and r.json()["key"] == "TOO_MANY_MAILS"
