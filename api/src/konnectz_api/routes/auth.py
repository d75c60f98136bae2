"""Sign-up with email verification, sign-in with a proof-of-work captcha, the profile."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from konnectz_api.core.security import (
    create_access_token,
    hash_password,
    new_token,
    token_digest,
    verify_password,
)
from konnectz_api.crud import login_throttle, mail_throttle, sessions, users
from konnectz_api.deps import CurrentClaims, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import BadRequest, Conflict, Forbidden, TooManyRequests, Unauthorized, Unprocessable
from konnectz_api.models import User
from konnectz_api.schemas import (
    EmailConfirmationIn,
    EmailIn,
    KeyReply,
    LoginIn,
    LoginOut,
    Message,
    Profile,
    SignupIn,
)
from konnectz_api.services import captcha
from konnectz_api.services.mail import send_mail

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1", tags=["auth"])

EMAIL_IN_USE = "E-mail address already in use."
PASSWORD_MISMATCH = "Password do not match. Try again!"  # noqa: S105 - a message
VERIFY_FAILED = "We were unable to verify this account. Contact us to know more."
CAPTCHA_NOT_VERIFIED = "Captcha is not verified."
BAD_CREDENTIALS = "Invalid email or password."
NOT_VERIFIED = "Please verify your email address first: follow the link we sent you."


@router.get("/captcha/challenge", summary="A proof-of-work captcha challenge for the sign-in form")
def captcha_challenge(settings: SettingsDep) -> dict[str, Any]:
    return captcha.new_challenge(settings)


@router.post("/users/user_exists", response_model=KeyReply)
def user_exists(body: EmailIn, session: SessionDep) -> KeyReply:
    if users.find_user_by_email(session, email=body.email):
        return KeyReply(key="USER_EXISTS", message=EMAIL_IN_USE)
    return KeyReply(key="NO_USER", message="This e-mail address is available.")


@router.post(
    "/signup",
    response_model=KeyReply,
    status_code=201,
    description="Creates the account and mails a verification link. Verification mails are limited per e-mail "
    "address (KONNECTZ_MAIL_MAX_PER_EMAIL) and per client address (KONNECTZ_MAIL_MAX_PER_ADDRESS) in a window "
    "of KONNECTZ_MAIL_WINDOW_SECONDS: beyond, 429 key TOO_MANY_MAILS with Retry-After.",
    responses={429: {"description": "Too many mails for this e-mail or from this client (key TOO_MANY_MAILS)"}},
)
def signup(body: SignupIn, request: Request, session: SessionDep, settings: SettingsDep) -> KeyReply:
    """In the thread pool, as every route that uses the database session: hashing and mailing too."""
    if body.password != body.password_confirmation:
        raise Unprocessable(PASSWORD_MISMATCH, key="PASSWORD_MISMATCH")
    if users.find_user_by_email(session, email=body.email):
        raise Conflict(EMAIL_IN_USE, key="USER_EXISTS")
    mail_throttle.check_and_count(
        session, settings, email=body.email, address=request.client.host if request.client else None
    )
    token = new_token()
    user = User(
        email=body.email.lower(),
        password_hash=hash_password(body.password),
        first_name=body.first_name.strip(),
        last_name=body.last_name.strip(),
        is_admin=False,  # never from the request
        verification_digest=token_digest(token),
        verification_expires_at=datetime.now(UTC) + timedelta(hours=settings.verification_token_hours),
        current_plan="Free",
        preferred_language="en",
        task_limit=1000,
    )
    session.add(user)
    session.commit()
    link = f"{settings.public_url.rstrip('/')}/verify-email/{token}"
    text = (
        f"Hi {user.first_name},\n\nWelcome to Konnectz! Confirm your e-mail address to activate your "
        f"account:\n\n{link}\n\nThe link is valid for {settings.verification_token_hours} hours.\n"
    )
    try:
        send_mail(settings, to=user.email, subject="Verify your Konnectz account", text=text)
    except OSError as exc:
        log.error("verification mail to %s failed: %s", user.email, exc)
        session.delete(user)
        session.commit()
        raise BadRequest(
            "Something went wrong! We could not send the verification e-mail.", key="SIGNUP_FAILED"
        ) from exc
    return KeyReply(key="SIGNUP_SUCCESS", message=f"We sent a verification link to {user.email}.")


@router.post("/users/email_confirmation", response_model=KeyReply)
def email_confirmation(body: EmailConfirmationIn, session: SessionDep) -> KeyReply:
    user = session.scalar(select(User).where(User.verification_digest == token_digest(body.confirmation_token)))
    now = datetime.now(UTC)
    if user is None or (user.verification_expires_at is not None and user.verification_expires_at < now):
        raise BadRequest(VERIFY_FAILED, key="VERIFY_EMAIL_FAIL")
    user.email_verified_at = now
    user.verification_digest = None
    user.verification_expires_at = None
    session.commit()
    return KeyReply(key="VERIFY_EMAIL_SUCCESS", message="Verification Completed")


@router.post(
    "/auth/login",
    response_model=LoginOut,
    description=(
        "Failed sign-ins are counted per e-mail and per client address in a window of "
        "KONNECTZ_LOGIN_WINDOW_SECONDS; beyond KONNECTZ_LOGIN_MAX_FAILURES_PER_EMAIL / _PER_ADDRESS the reply is "
        "429 with Retry-After (seconds) until the window ends. A successful sign-in clears the e-mail's count."
    ),
    responses={429: {"description": "Too many failed sign-ins; see the Retry-After header"}},
)
def login(body: LoginIn, request: Request, session: SessionDep, settings: SettingsDep) -> LoginOut:
    window = timedelta(seconds=settings.login_window_seconds)
    address = login_throttle.address_key(request.client.host if request.client else "unknown")
    email = login_throttle.email_key(body.email)
    wait = login_throttle.retry_after(
        session,
        keys_and_limits=[
            (address, settings.login_max_failures_per_address),
            (email, settings.login_max_failures_per_email),
        ],
        window=window,
    )
    if wait is not None:
        raise TooManyRequests(
            f"Too many failed sign-in attempts. Try again in {wait} seconds.", headers={"Retry-After": str(wait)}
        )
    if not captcha.verify(settings, session, body.captcha):
        login_throttle.record_failure(session, keys=[address], window=window)
        raise BadRequest(CAPTCHA_NOT_VERIFIED)
    user = users.find_user_by_email(session, email=body.email)
    version = user.session_version if user is not None else 0
    if user is None or not verify_password(user.password_hash, body.password):
        login_throttle.record_failure(session, keys=[address, email], window=window)
        raise Unauthorized(BAD_CREDENTIALS)
    login_throttle.clear(session, key=email)
    if user.email_verified_at is None:
        raise Forbidden(NOT_VERIFIED)
    lifetime = (
        timedelta(days=settings.remember_me_days)
        if body.rememberMe
        else timedelta(minutes=settings.access_token_minutes)
    )
    # The version read with the password hash above: a change committed meanwhile ends this token too.
    token = create_access_token(user_id=user.id, secret=settings.secret_key, lifetime=lifetime, session_version=version)
    return LoginOut(auth_token=token, preferred_language=user.preferred_language, message="Signed in")


@router.get("/users/profile", response_model=Profile)
def profile(user: SignedInUser, settings: SettingsDep) -> Profile:
    return users.profile_of(user, settings)


@router.post(
    "/users/logout",
    response_model=Message,
    summary="End this session (or every session)",
    description="Revokes the bearer token of the request: it is refused from now on, even before it expires. "
    "With `everywhere=true` every token of the user issued before this call ends too (other browsers and "
    "devices), however close in time: the user's session version is incremented.",
)
def logout(
    signed_in: CurrentClaims,
    session: SessionDep,
    everywhere: Annotated[bool, Query(description="End every session of the user, not only this one")] = False,
) -> Message:
    user, claims = signed_in
    if claims.jti is not None:
        sessions.revoke(session, jti=claims.jti, expires_at=claims.expires_at)
    if everywhere:
        sessions.end_all_sessions(session, user_id=user.id)
        session.commit()
        return Message(message="Signed out everywhere")
    return Message(message="Signed out")
