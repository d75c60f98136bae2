"""Forgotten password: a mailed single-use link that expires, then a new password."""

from __future__ import annotations

import logging
from datetime import timedelta

from fastapi import APIRouter, Request

from konnectz_api.core.security import hash_password
from konnectz_api.crud import mail_throttle, users
from konnectz_api.crud import password_reset as crud
from konnectz_api.deps import SessionDep, SettingsDep
from konnectz_api.errors import BadRequest, NotFound
from konnectz_api.schemas import EmailIn, KeyReply, ResetPasswordIn
from konnectz_api.services.mail import send_mail

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1/users", tags=["auth"])

UNKNOWN_USER = "User doesn't exist!"
MAIL_FAILED = "Something Went Wrong"
PASSWORD_MISMATCH = "Password do not match. Try again!"  # noqa: S105 - a message
TOKEN_INVALID = "This password reset link is invalid, already used or expired. Request a new one."  # noqa: S105


@router.post(
    "/reset_password_email",
    response_model=KeyReply,
    summary="Mail a single-use password reset link",
    description=(
        "Known e-mail: key SENT_RESET_INSTRUCTIONS and a mail with a link to /reset-password/{token} that "
        "works once and expires after KONNECTZ_RESET_TOKEN_MINUTES (a new request replaces the old link). "
        "Unknown e-mail: 404 with key SENT_RESET_INSTRUCTIONS_FAIL. Requests are limited per e-mail address "
        "(KONNECTZ_MAIL_MAX_PER_EMAIL) and per client address (KONNECTZ_MAIL_MAX_PER_ADDRESS) in a window of "
        "KONNECTZ_MAIL_WINDOW_SECONDS: beyond, 429 key TOO_MANY_MAILS with Retry-After."
    ),
    responses={
        404: {"description": "No user with that e-mail (key SENT_RESET_INSTRUCTIONS_FAIL)"},
        429: {"description": "Too many mails for this e-mail or from this client (key TOO_MANY_MAILS, Retry-After)"},
    },
)
def reset_password_email(body: EmailIn, request: Request, session: SessionDep, settings: SettingsDep) -> KeyReply:
    mail_throttle.check_and_count(
        session, settings, email=body.email, address=request.client.host if request.client else None
    )
    user = users.find_user_by_email(session, email=body.email)
    if user is None:
        raise NotFound(UNKNOWN_USER, key="SENT_RESET_INSTRUCTIONS_FAIL")
    minutes = settings.reset_token_minutes
    token = crud.issue_token(session, user=user, lifetime=timedelta(minutes=minutes))
    link = f"{settings.public_url.rstrip('/')}/reset-password/{token}"
    text = (
        f"Hi {user.first_name},\n\nSomeone (hopefully you) asked to reset the password of your Konnectz "
        f"account. Choose a new password here:\n\n{link}\n\nThe link works once and is valid for {minutes} "
        "minutes. If you did not ask for this, ignore this mail: your password stays as it is.\n"
    )
    try:
        send_mail(settings, to=user.email, subject="Reset your Konnectz password", text=text)
    except OSError as exc:
        log.error("password reset mail to user %s failed: %s", user.id, exc)
        raise BadRequest(MAIL_FAILED, key="MAIL_FAILED") from exc
    return KeyReply(key="SENT_RESET_INSTRUCTIONS", message=f"We sent forgot password link on {user.email}")


@router.post(
    "/update_user_password",
    response_model=KeyReply,
    summary="Set a new password with a reset token",
    description="Key PASSWORD_UPDATED; a wrong, used or expired token or a mismatch: 400 key PASSWORD_NOT_UPDATED.",
    responses={400: {"description": "key PASSWORD_NOT_UPDATED with the reason in message"}},
)
def update_user_password(body: ResetPasswordIn, session: SessionDep) -> KeyReply:
    if body.password != body.password_confirmation:
        raise BadRequest(PASSWORD_MISMATCH, key="PASSWORD_NOT_UPDATED")
    password_hash = hash_password(body.password)
    if crud.consume_token(session, token=body.reset_password_token, password_hash=password_hash) is None:
        raise BadRequest(TOKEN_INVALID, key="PASSWORD_NOT_UPDATED")
    return KeyReply(key="PASSWORD_UPDATED", message="Your password has been updated. Sign in with it.")
