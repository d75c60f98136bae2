"""Session ends: revoking one access token (logout) and all of a user's tokens (password change)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, exists, false, select
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
    """The token's user unless the token was revoked (logout) or issued before the user's cutoff
    (password change): one query, the user and the revocation check together."""
    revoked = exists().where(RevokedToken.jti == claims.jti) if claims.jti is not None else false()
    row = session.execute(select(User, revoked).where(User.id == claims.user_id)).first()
    if row is None or row[1]:
        return None
    user: User = row[0]
    cutoff = user.tokens_valid_after
    if cutoff is not None and (claims.issued_at is None or claims.issued_at < cutoff.replace(microsecond=0)):
        return None
    return user


def end_all_sessions(*, user: User) -> None:
    """Tokens issued before now stop working (the caller commits with its change)."""
    user.tokens_valid_after = datetime.now(UTC)
