"""Session ends: revoking one access token (logout, by its ``jti``) and all of a user's tokens (password
change or reset: the user's ``session_version`` is incremented; every token carries the version it was
issued under, so one issued before the change is refused however close in time)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, exists, false, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.core.security import AccessClaims
from konnectz_api.models import RevokedToken, User


def revoke(session: Session, *, jti: str, expires_at: datetime) -> None:
    """Refuse this token from now on; expired revocations are swept on the way. Commits."""
    session.execute(insert(RevokedToken).values(jti=jti, expires_at=expires_at).on_conflict_do_nothing())
    session.execute(delete(RevokedToken).where(RevokedToken.expires_at < datetime.now(UTC)))
    session.commit()


def signed_in(session: Session, *, claims: AccessClaims) -> User | None:
    """The token's user unless the token was revoked (logout) or issued under an older session version
    (password change or reset): one query, the user and the revocation check together."""
    revoked = exists().where(RevokedToken.jti == claims.jti) if claims.jti is not None else false()
    row = session.execute(select(User, revoked).where(User.id == claims.user_id)).first()
    if row is None or row[1]:
        return None
    user: User = row[0]
    if claims.session_version != user.session_version:
        return None
    return user


def end_all_sessions(session: Session, *, user_id: int) -> int:
    """Every token of the user issued before now stops working; returns the new session version (for a
    token issued to the caller after the change). Part of the caller's transaction (it commits)."""
    version: int = session.execute(
        update(User)
        .where(User.id == user_id)
        .values(session_version=User.session_version + 1, tokens_valid_after=func.now())
        .returning(User.session_version)
    ).scalar_one()
    return version
