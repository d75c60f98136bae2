import re
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import func, select, update

from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User

NEW = "brand-new-pass-1"


def _links(api, email):
    texts = [m["text"] for m in api.mail_to(email) if m["subject"] == "Reset your Konnectz password"]
    return {re.search(r"http://app\.test/reset-password/(\S+)", t).group(1) for t in texts}


def _request_link(client, api, email):
    before = _links(api, email)
    r = client.post("/api/v1/users/reset_password_email", json={"email": email.upper()})
    assert r.status_code == 200, r.text
    assert r.json() == {"key": "SENT_RESET_INSTRUCTIONS", "message": f"We sent forgot password link on {email}"}
    (token,) = _links(api, email) - before  # exactly one new mail (the maildir is unordered)
    return token


def _reset(client, token, password=NEW, confirmation=None):
    return client.post(
        "/api/v1/users/update_user_password",
        json={"reset_password_token": token, "password": password, "password_confirmation": confirmation or password},
    )


def _login_status(client, api, email, password):
    body = {"email": email, "password": password, "rememberMe": False, "captcha": api.solved_captcha()}
    return client.post("/api/v1/auth/login", json=body).status_code


def test_reset_by_mail_then_sign_in_with_the_new_password(client, api):
    email = api.signup_and_verify()
    token = _request_link(client, api, email)
    r = _reset(client, token)
    assert r.status_code == 200 and r.json()["key"] == "PASSWORD_UPDATED"
    assert _login_status(client, api, email, NEW) == 200
    assert _login_status(client, api, email, "s3cret-pass") == 401
    # The link works once.
    r = _reset(client, token, password="another-pass-2")
    assert r.status_code == 400 and r.json()["key"] == "PASSWORD_NOT_UPDATED"
    assert "already used or expired" in r.json()["message"]
    assert _login_status(client, api, email, NEW) == 200


def test_unknown_user_gets_the_spec_key_and_no_mail(client, api):
    r = client.post("/api/v1/users/reset_password_email", json={"email": "nobody-here@example.com"})
    assert r.status_code == 404
    assert r.json() == {"message": "User doesn't exist!", "key": "SENT_RESET_INSTRUCTIONS_FAIL"}
    assert api.mail_to("nobody-here@example.com") == []


def test_expired_replaced_wrong_and_mismatched_tokens_fail(client, api):
    email = api.signup_and_verify()
    first = _request_link(client, api, email)
    second = _request_link(client, api, email)
    # A newer link replaces the older one.
    assert _reset(client, first).json()["key"] == "PASSWORD_NOT_UPDATED"
    # Mismatch leaves the token usable.
    r = _reset(client, second, confirmation="something-else")
    assert r.status_code == 400 and r.json() == {
        "message": "Password do not match. Try again!",
        "key": "PASSWORD_NOT_UPDATED",
    }
    with get_sessionmaker()() as s:
        s.execute(
            update(User)
            .where(User.email == email)
            .values(reset_password_expires_at=func.now() - func.make_interval(0, 0, 0, 0, 0, 1))
        )
        s.commit()
    r = _reset(client, second)
    assert r.status_code == 400 and r.json()["key"] == "PASSWORD_NOT_UPDATED"
    assert _login_status(client, api, email, "s3cret-pass") == 200
    for bad in ("nope", "\x00", "x" * 200):
        assert _reset(client, bad).status_code == 400
    assert _reset(client, "x" * 201).status_code == 422
    assert _reset(client, second, password="short").status_code == 422
    r = client.post("/api/v1/users/reset_password_email", json={"email": "a\x00b@example.com"})
    assert r.status_code == 422
    r = client.post("/api/v1/users/update_user_password", json={"password": NEW})
    assert r.status_code == 422


def test_a_token_cannot_be_used_twice_concurrently(client, api):
    email = api.signup_and_verify()
    token = _request_link(client, api, email)
    with ThreadPoolExecutor(4) as pool:
        keys = list(pool.map(lambda i: _reset(client, token, password=f"racing-pass-{i}").json()["key"], range(4)))
    assert keys.count("PASSWORD_UPDATED") == 1 and keys.count("PASSWORD_NOT_UPDATED") == 3
    with get_sessionmaker()() as s:
        user = s.scalar(select(User).where(User.email == email))
        assert user.reset_password_digest is None and user.reset_password_expires_at is None
