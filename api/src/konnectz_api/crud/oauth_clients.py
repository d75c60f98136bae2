"""OAuth apps of catalogue apps: ``KONNECTZ_OAUTH_CLIENTS`` or what an administrator entered in the UI.

- Who may enter them (:func:`can_configure`): an administrator, named by the installer
  (:mod:`konnectz_api.crud.admins`: ``KONNECTZ_ADMIN_EMAILS`` or ``python -m konnectz_api admin grant``),
  never inferred. Without one, clients come only from ``KONNECTZ_OAUTH_CLIENTS``.
- Where a client comes from (:func:`resolve`): the environment variable wins; a row of ``oauth_clients``
  serves the apps the variable does not name. The operator's deployment stays the authority, and the UI
  shows an app configured there as "set by the server" (read-only).
- The client secret is sealed with the credential cipher (:mod:`konnectz_api.core.crypto`, the one app
  account credentials use) and only opened for a token request to the provider; no reply carries it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.core.crypto import CredentialCipher
from konnectz_api.crud import admins
from konnectz_api.models import OAuthClientConfig, User

__all__ = ["ResolvedClient", "can_configure", "remove", "resolve", "save", "stored"]

Source = Literal["environment", "settings"]


@dataclass(frozen=True)
class ResolvedClient:
    client_id: str
    client_secret: str
    source: Source


def can_configure(user: User, settings: Settings) -> bool:
    """An administrator (:func:`konnectz_api.crud.admins.is_administrator`); nobody else, however few
    users the install has."""
    return admins.is_administrator(user, settings)


def stored(session: Session, app_key: str) -> OAuthClientConfig | None:
    return session.get(OAuthClientConfig, app_key)


def _from_env(settings: Settings, app_key: str) -> ResolvedClient | None:
    config = settings.oauth_clients.get(app_key)
    if not config or not config.get("client_id"):
        return None
    return ResolvedClient(config["client_id"], config.get("client_secret", ""), "environment")


def resolve(
    session: Session, settings: Settings, app_key: str, *, cipher: CredentialCipher | None
) -> ResolvedClient | None:
    """The client of an app: the environment's, else the stored one (secret opened only with a cipher)."""
    env = _from_env(settings, app_key)
    if env is not None:
        return env
    row = stored(session, app_key)
    if row is None or not row.client_id:
        return None
    secret = cipher.decrypt(row.client_secret).get("client_secret", "") if cipher is not None else ""
    return ResolvedClient(row.client_id, str(secret), "settings")


def save(
    session: Session,
    *,
    app_key: str,
    client_id: str,
    client_secret: str | None,
    cipher: CredentialCipher,
    user_id: int | None,
) -> OAuthClientConfig:
    """Store (or replace) an app's client; ``client_secret`` None keeps the stored secret."""
    row = stored(session, app_key)
    if row is None:
        row = OAuthClientConfig(
            app_key=app_key, client_id=client_id, client_secret=cipher.encrypt({"client_secret": ""})
        )
        session.add(row)
    row.client_id = client_id
    if client_secret is not None:
        row.client_secret = cipher.encrypt({"client_secret": client_secret})
    row.updated_by = user_id
    session.commit()
    return row


def remove(session: Session, app_key: str) -> bool:
    row = stored(session, app_key)
    if row is None:
        return False
    session.delete(row)
    session.commit()
    return True
