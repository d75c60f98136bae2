"""App accounts (connected accounts of catalogue apps) and pending OAuth2 authorisations.

Every query is scoped to its owner. Credentials are stored encrypted (:mod:`konnectz_api.core.crypto`)
and only decrypted for a request to the app itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, or_, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from konnectz_api.core.crypto import CredentialCipher
from konnectz_api.crud import caps
from konnectz_api.crud.quota import MAX_LISTED
from konnectz_api.models import AppAccount, Konnect, OAuthState

__all__ = [
    "counts_by_app",
    "create_account",
    "create_state",
    "credentials_of",
    "get_account",
    "in_use_by_published",
    "list_accounts",
    "remove_account",
    "rename_account",
    "set_rate_limit",
    "store_credentials",
    "take_state",
]

PUBLISHED = "Published"


def list_accounts(session: Session, *, owner_id: int, app_id: int) -> list[AppAccount]:
    """The owner's accounts of an app, oldest first, at most ``quota.MAX_LISTED`` (bounded like every list)."""
    stmt = select(AppAccount).where(AppAccount.owner_id == owner_id, AppAccount.app_id == app_id)
    return list(session.scalars(stmt.order_by(AppAccount.id).limit(MAX_LISTED)))


def counts_by_app(session: Session, *, owner_id: int, app_ids: list[int]) -> dict[int, int]:
    if not app_ids:
        return {}
    stmt = (
        select(AppAccount.app_id, func.count())
        .where(AppAccount.owner_id == owner_id, AppAccount.app_id.in_(app_ids))
        .group_by(AppAccount.app_id)
    )
    return {app_id: count for app_id, count in session.execute(stmt).all()}


def get_account(session: Session, *, owner_id: int, account_id: int) -> AppAccount | None:
    if not 0 < account_id < 2**63:
        return None
    account = session.get(AppAccount, account_id)
    return account if account is not None and account.owner_id == owner_id else None


def create_account(
    session: Session,
    *,
    owner_id: int,
    app_id: int,
    app_key: str,
    label: str,
    credentials: dict[str, Any],
    cipher: CredentialCipher,
    expires_at: datetime | None = None,
) -> AppAccount:
    """Raises :class:`~konnectz_api.crud.caps.PlanLimit` beyond the plan's app accounts."""
    caps.check(session, owner_id=owner_id, kind="app_accounts")
    account = AppAccount(
        owner_id=owner_id,
        app_id=app_id,
        app_key=app_key,
        label=label[:255],
        credentials=cipher.encrypt(credentials),
        token_expires_at=expires_at,
    )
    session.add(account)
    session.commit()
    return account


def credentials_of(account: AppAccount, *, cipher: CredentialCipher) -> dict[str, Any]:
    return cipher.decrypt(account.credentials)


def store_credentials(
    session: Session,
    *,
    account: AppAccount,
    credentials: dict[str, Any],
    cipher: CredentialCipher,
    expires_at: datetime | None,
) -> None:
    account.credentials = cipher.encrypt(credentials)
    account.token_expires_at = expires_at
    session.commit()


def rename_account(session: Session, *, account: AppAccount, label: str) -> None:
    account.label = label
    session.commit()


def set_rate_limit(session: Session, *, account: AppAccount, rate_limit_rps: float | None) -> None:
    """The owner's rate budget override (requests/second; None: the app's own rate)."""
    account.rate_limit_rps = rate_limit_rps
    session.commit()


def account_shapes(account_id: int) -> list[dict[str, Any]]:
    """The canvas_json shapes (JSONB containment) of a node using the account: selected as a node's account,
    or an AI Agent's (``data.agent``: its model's account, or a tool's: docs/ai.md)."""
    shapes: list[dict[str, Any]] = []
    for value in (account_id, str(account_id)):
        shapes.append({"apps": [{"data": {"selectedAccount": {"id": value}}}]})
        shapes.append({"apps": [{"data": {"agent": {"account_id": value}}}]})
        shapes.append({"apps": [{"data": {"agent": {"tools": [{"account_id": value}]}}}]})
    return shapes


def in_use_by_published(session: Session, *, owner_id: int, account_id: int) -> bool:
    """A published konnect of the owner has a node with this account selected."""
    shapes = account_shapes(account_id)
    stmt = select(Konnect.id).where(
        Konnect.owner_id == owner_id,
        Konnect.status == PUBLISHED,
        or_(*(type_coerce(Konnect.canvas_json, JSONB).contains(shape) for shape in shapes)),
    )
    return session.scalar(stmt.limit(1)) is not None


def remove_account(session: Session, *, account: AppAccount) -> None:
    session.delete(account)
    session.commit()


def create_state(
    session: Session,
    *,
    nonce: str,
    owner_id: int,
    app_id: int,
    app_account_id: int | None,
    redirect_url: str,
    verifier: str,
    ttl: timedelta,
) -> None:
    now = datetime.now(UTC)
    session.execute(delete(OAuthState).where(OAuthState.expires_at < now))
    session.add(
        OAuthState(
            nonce=nonce,
            owner_id=owner_id,
            app_id=app_id,
            app_account_id=app_account_id,
            redirect_url=redirect_url,
            verifier=verifier,
            expires_at=now + ttl,
        )
    )
    session.commit()


def take_state(session: Session, *, nonce: str, owner_id: int) -> OAuthState | None:
    """The pending authorisation, consumed (a state works once), if it is the owner's and not expired."""
    state = session.get(OAuthState, nonce)
    if state is None or state.owner_id != owner_id:
        return None
    session.delete(state)
    session.commit()
    return state if state.expires_at > datetime.now(UTC) else None
