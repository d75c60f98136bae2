import re
import time
from pathlib import Path

from sqlalchemy import update

from konnectz_api.crud.users import find_user_by_email
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User

API_SRC = Path(__file__).resolve().parents[1] / "src" / "konnectz_api"


def _signup(client, email, password="s3cret-pass", confirmation=None):
    return client.post(
        "/api/v1/signup",
        json={
            "email": email,
            "first_name": "Ada",
            "last_name": "L",
            "password": password,
            "password_confirmation": confirmation or password,
            "is_admin": True,
        },
    )


def test_signup_verify_login_profile(client, api):
    email = f"flow-{time.time_ns()}@example.com"
    assert client.post("/api/v1/users/user_exists", json={"email": email}).json()["key"] == "NO_USER"
    r = _signup(client, email)
    assert r.status_code == 201 and r.json()["key"] == "SIGNUP_SUCCESS"
    assert client.post("/api/v1/users/user_exists", json={"email": email}).json() == {
        "key": "USER_EXISTS",
        "message": "E-mail address already in use.",
    }

    # Not verified yet: sign-in is refused.
    r = client.post(
        "/api/v1/auth/login", json={"email": email, "password": "s3cret-pass", "captcha": api.solved_captcha()}
    )
    assert r.status_code == 403 and "verify" in r.json()["message"]

    mails = api.mail_to(email)
    assert mails and mails[-1]["subject"] == "Verify your Konnectz account"
    token = re.search(r"http://app\.test/verify-email/(\S+)", mails[-1]["text"]).group(1)
    r = client.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
    assert r.json()["key"] == "VERIFY_EMAIL_SUCCESS"
    # A verification link works once.
    r = client.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
    assert r.status_code == 400
    assert r.json()["message"] == "We were unable to verify this account. Contact us to know more."

    headers = api.login(email)
    profile = client.get("/api/v1/users/profile", headers=headers).json()
    assert profile["email"] == email and profile["first_name"] == "Ada"
    assert profile["is_admin"] is False  # never taken from the signup request


def test_signup_errors(client, api):
    email = api.signup_and_verify()
    r = _signup(client, email.upper())
    assert r.status_code == 409 and r.json()["message"] == "E-mail address already in use."
    r = _signup(client, f"other-{time.time_ns()}@example.com", confirmation="different-pass")
    assert r.status_code == 422 and r.json()["message"] == "Password do not match. Try again!"
    r = _signup(client, "not-an-email")
    assert r.status_code == 422 and r.json()["message"].startswith("email:")
    r = _signup(client, f"short-{time.time_ns()}@example.com", password="short")
    assert r.status_code == 422 and "password" in r.json()["message"]
    r = client.post("/api/v1/users/email_confirmation", json={"confirmation_token": "nope"})
    assert r.status_code == 400


def test_login_needs_a_fresh_valid_captcha(client, api):
    email = api.signup_and_verify()
    body = {"email": email, "password": "s3cret-pass", "rememberMe": True}
    r = client.post("/api/v1/auth/login", json=body)
    assert r.status_code == 400 and r.json()["message"] == "Captcha is not verified."
    r = client.post("/api/v1/auth/login", json={**body, "captcha": "bm90IGEgcGF5bG9hZA=="})
    assert r.status_code == 400 and r.json()["message"] == "Captcha is not verified."
    payload = api.solved_captcha()
    assert client.post("/api/v1/auth/login", json={**body, "captcha": payload}).status_code == 200
    # The same solution cannot be replayed.
    r = client.post("/api/v1/auth/login", json={**body, "captcha": payload})
    assert r.status_code == 400 and r.json()["message"] == "Captcha is not verified."
    r = client.post("/api/v1/auth/login", json={**body, "password": "wrong-pass", "captcha": api.solved_captcha()})
    assert r.status_code == 401 and r.json()["message"] == "Invalid email or password."


def test_profile_needs_a_valid_token(client):
    assert client.get("/api/v1/users/profile").status_code == 401
    r = client.get("/api/v1/users/profile", headers={"Authorization": "Bearer garbage"})
    assert r.status_code == 401 and r.json()["message"]


def test_expired_token_is_refused(client, api_env):
    from datetime import timedelta

    from konnectz_api.core.security import create_access_token

    token = create_access_token(user_id=1, secret=api_env["KONNECTZ_SECRET_KEY"], lifetime=timedelta(seconds=-1))
    assert client.get("/api/v1/users/profile", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_passwords_are_argon2id(client, api):
    from sqlalchemy import select

    from konnectz_api.db import get_sessionmaker
    from konnectz_api.models import User

    email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        user = s.scalar(select(User).where(User.email == email))
    assert user.password_hash.startswith("$argon2id$")


def test_a_user_is_found_by_e_mail_whatever_its_case_and_surrounding_spaces(client, api):
    email = api.signup_and_verify()
    with get_sessionmaker()() as session:
        user = find_user_by_email(session, email=email)
        assert user is not None and user.email == email  # sign-up stores it lower-cased
        assert find_user_by_email(session, email=f"  {email.upper()}\t") is user
        assert find_user_by_email(session, email=f"x{email}") is None
        # A row stored with capitals (an older install, a hand-made one) is found too.
        session.execute(update(User).where(User.id == user.id).values(email=email.capitalize()))
        session.expire_all()
        found = find_user_by_email(session, email=email)
        assert found is not None and found.id == user.id and found.email == email.capitalize()
        session.rollback()
    # Sign-up, sign-in and the reset mail use the same lookup: the address as typed otherwise.
    assert client.post("/api/v1/users/user_exists", json={"email": email.upper()}).json()["key"] == "USER_EXISTS"
    assert _signup(client, email.upper()).status_code == 409
    assert api.login(f" {email.upper()} ")["Authorization"].startswith("Bearer ")


def test_only_crud_users_looks_a_user_up_by_e_mail():
    """One definition (:func:`konnectz_api.crud.users.find_user_by_email`): no other module compares
    ``User.email`` with an address of its own (listing the named administrators is a set, not a lookup)."""
    own = []
    for path in sorted(API_SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "migrations" in path.parts or path.name == "users.py":
            continue
        if re.search(r"(lower\(User\.email\)|User\.email)\s*==", text):
            own.append(str(path.relative_to(API_SRC)))
    assert own == []
