"""Session ends: revoking one access token (logout) and all of a user's tokens (password change)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.core.security import AccessClaims
from konnectz_api.models import RevokedToken, User


def revoke(session: Session, *, jti: str, expires_at: datetime) -> None:
    """Refuse this token from now on; expired revocations are swept on the way. Commits."""
    session.execute(insert(RevokedToken).values(jti=jti, expires_at=expires_at).on_conflict_do_nothing())
    session.execute(delete(RevokedToken).where(RevokedToken.expires_at < datetime.now(UTC)))
    session.commit()


def is_revoked(session: Session, *, claims: AccessClaims, user: User) -> bool:
    if claims.jti is not None and session.scalar(select(RevokedToken.jti).where(RevokedToken.jti == claims.jti)):
        return True
    cutoff = user.tokens_valid_after
    return cutoff is not None and (claims.issued_at is None or claims.issued_at < cutoff.replace(microsecond=0))


def end_all_sessions(*, user: User) -> None:
    """Tokens issued before now stop working (the caller commits with its change)."""
    user.tokens_valid_after = datetime.now(UTC)
