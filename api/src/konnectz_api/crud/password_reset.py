"""Single-use, expiring password reset tokens (only their SHA-256 digest is stored)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, update
from sqlalchemy.orm import Session

from konnectz_api.core.security import new_token, token_digest
from konnectz_api.models import User


def issue_token(session: Session, *, user: User, lifetime: timedelta) -> str:
    """A new reset token for ``user``; any earlier one stops working. Commits."""
    token = new_token()
    user.reset_password_digest = token_digest(token)
    user.reset_password_expires_at = datetime.now(UTC) + lifetime
    session.commit()
    return token


def consume_token(session: Session, *, token: str, password_hash: str) -> int | None:
    """Set the password of the token's user and burn the token in one statement.

    Returns the user id, or None when the token is unknown, already used or expired. Two
    concurrent requests with the same token cannot both succeed: the row lock of the UPDATE
    serialises them and the second one no longer matches the digest. Commits.
    """
    user_id = session.scalar(
        update(User)
        .where(User.reset_password_digest == token_digest(token), User.reset_password_expires_at > func.now())
        .values(
            password_hash=password_hash,
            reset_password_digest=None,
            reset_password_expires_at=None,
            tokens_valid_after=func.now(),
            session_version=User.session_version + 1,  # sessions signed in with the old password end
        )
        .returning(User.id)
    )
    session.commit()
    return user_id
