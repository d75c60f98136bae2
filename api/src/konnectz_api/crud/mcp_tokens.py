"""MCP tokens: what lets an MCP client (an AI assistant, an agent) call an account's flows at ``/mcp``.

A token belongs to an **account** (``owner_id``; a team member makes and revokes them in the account
they work in, with the access levels of any change: Create to make, Create/Delete to revoke) and
reaches only the flows it names (``konnect_ids``, at most :data:`MAX_FLOWS`, each a flow of the
account). A named flow is a tool while it is published with the *Called by a flow or AI tool* trigger
and offers itself as an MCP tool (``mcp``); a flow that stops being one is simply not listed.

The token is ``kzmcp_`` and 43 URL-safe characters (256 random bits), shown once when it is made.
Only its SHA-256 is stored (a token of that entropy needs no slow hash: no guess can be tested
offline faster than the key space allows), with its first characters (``prefix``) for the list.
A revoked token is refused at once (each call reads the row) and stays listed as revoked. At most
:data:`MAX_TOKENS` tokens (revoked ones included) per account. See docs/mcp.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.models import Konnect, McpToken, User, utcnow

__all__ = [
    "MAX_FLOWS",
    "MAX_TOKENS",
    "PREFIX",
    "Made",
    "McpTokenError",
    "authenticate",
    "create",
    "listed",
    "revoke",
]

PREFIX = "kzmcp_"
MAX_FLOWS = 50
MAX_TOKENS = 100
#: ``last_used_at`` is written at most this often per token (a call is not a write).
_TOUCH_EVERY = timedelta(minutes=1)


class McpTokenError(ValueError):
    """A token that cannot be made, with the message for the user; ``kind``: ``limit`` or ``flows``."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Made:
    row: McpToken
    token: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(session: Session, *, account: User, actor: User, name: str, konnect_ids: list[int]) -> Made:
    """A new token of ``account`` reaching ``konnect_ids`` (the account's flows). Commits."""
    wanted = list(dict.fromkeys(konnect_ids))
    if not wanted or len(wanted) > MAX_FLOWS:
        raise McpTokenError(f"Choose between 1 and {MAX_FLOWS} flows", "flows")
    owned = set(session.scalars(select(Konnect.id).where(Konnect.owner_id == account.id, Konnect.id.in_(wanted))))
    missing = [k for k in wanted if k not in owned]
    if missing:
        raise McpTokenError(f"No flow {', '.join(map(str, missing))} in this account", "flows")
    count = session.scalar(select(func.count()).select_from(McpToken).where(McpToken.owner_id == account.id)) or 0
    if count >= MAX_TOKENS:
        raise McpTokenError(f"An account has at most {MAX_TOKENS} MCP tokens: delete revoked ones first", "limit")
    token = PREFIX + secrets.token_urlsafe(32)
    row = McpToken(
        owner_id=account.id,
        created_by=actor.id,
        name=name,
        token_hash=_digest(token),
        prefix=token[: len(PREFIX) + 4],
        konnect_ids=wanted,
    )
    session.add(row)
    session.commit()
    return Made(row=row, token=token)


def listed(session: Session, *, account: User) -> list[McpToken]:
    return list(session.scalars(select(McpToken).where(McpToken.owner_id == account.id).order_by(McpToken.id.desc())))


def revoke(session: Session, *, account: User, token_id: int) -> McpToken | None:
    """Revoke the account's token ``token_id`` (None: no such token). Commits; revoking twice is harmless."""
    row = session.scalar(select(McpToken).where(McpToken.id == token_id, McpToken.owner_id == account.id))
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.commit()
    return row


def authenticate(session: Session, token: str) -> tuple[McpToken, User] | None:
    """The live token ``token`` and its account, or None (unknown, malformed, revoked, or its account gone)."""
    if not token.startswith(PREFIX) or len(token) > 100:
        return None
    digest = _digest(token)
    row = session.scalar(select(McpToken).where(McpToken.token_hash == digest))
    if row is None or not hmac.compare_digest(row.token_hash, digest) or row.revoked_at is not None:
        return None
    account = session.get(User, row.owner_id)
    if account is None:
        return None
    now = utcnow()
    if row.last_used_at is None or now - row.last_used_at > _TOUCH_EVERY:
        row.last_used_at = now
        session.commit()
    return row, account
