"""The credential broker: connecting accounts, and fresh credentials for requests to apps.

- :func:`connect_token_account`: token fields → the app's test request → an encrypted account.
- :func:`connect_oauth_account`: code + PKCE verifier → tokens → test request → an account.
- :func:`fresh_credentials`: an account's credentials, refreshed first when an OAuth2 access
  token expires within a minute (the api refreshes; runners ask the api).
- :func:`call_with_account`: one request built from credentials; a reply that means "expired"
  (status or a rule matching the body) refreshes the token and retries once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.core.crypto import CredentialCipher
from konnectz_api.crud import app_accounts, oauth_clients
from konnectz_api.db import run_db
from konnectz_api.models import AppAccount
from konnectz_api.services.app_calls import MCP_APP_KEY, AppCallError, Reply, call_app, list_mcp_tools
from konnectz_api.services.oauth import OAuthClient, refresh
from konnectz_contracts.manifest import App, TokenField
from konnectz_contracts.refs import resolve
from konnectz_runner.apps import AppRequest, NetGuard, build_test_request, dig, hook_error, is_expired, secret_values

__all__ = [
    "call_with_account",
    "cipher",
    "connect_oauth_account",
    "connect_token_account",
    "fresh_credentials",
    "not_configured_message",
    "oauth_client",
    "refresh_credentials",
]

REFRESH_MARGIN = timedelta(seconds=60)
#: Connecting an MCP server's account lists its tools within this bound.
MCP_TEST_TIMEOUT_SECONDS = 15.0


def cipher(settings: Settings) -> CredentialCipher:
    return CredentialCipher.from_settings(settings.encryption_key, settings.old_encryption_keys)


def not_configured_message(app: App) -> str:
    """What to do when an OAuth2 app has no client: where to enter it, the variable, the token way."""
    message = (
        f"{app.name} is not configured for OAuth2 on this server (no client id). An administrator can enter the "
        f"client id and secret of an OAuth app registered with {app.name} in Applications > {app.name} > Manage "
        f'Accounts, or set KONNECTZ_OAUTH_CLIENTS on the api ({{"{app.key}": {{"client_id": "...", '
        '"client_secret": "..."}}).'
    )
    if app.auth.token_method is not None:
        message += f" You can also connect with a {app.auth.token_method.label.lower()} instead."
    return message


def oauth_client(session: Session, settings: Settings, app: App) -> OAuthClient:
    """The app's OAuth client: ``KONNECTZ_OAUTH_CLIENTS`` first, else what an administrator entered."""
    config = oauth_clients.resolve(session, settings, app.key, cipher=cipher(settings))
    if config is None:
        raise AppCallError(not_configured_message(app))
    return OAuthClient(config.client_id, config.client_secret)


async def _label_from_test(
    http: httpx.AsyncClient, guard: NetGuard, app: App, credentials: dict[str, Any], fallback: str
) -> str:
    """Run the app's test request (raises if it fails) and name the account from its reply. An MCP server's
    account is tested by listing its tools."""
    request = build_test_request(app, credentials)
    label = ""
    if app.key == MCP_APP_KEY:
        await list_mcp_tools(guard, credentials, timeout=MCP_TEST_TIMEOUT_SECONDS)
        request = None
    if request is not None:
        reply = await call_app(http, guard, request, secrets=secret_values(app, credentials), hooks=app.hooks)
        path = app.auth.test.label_path if app.auth.test else None
        found = dig(reply.body, path) if path else None
        if isinstance(found, str | int | float) and not isinstance(found, bool):
            label = str(found)
    if not label and app.auth.connection_label:
        label = resolve(app.auth.connection_label, {"auth": credentials})
    return (label or fallback).strip()[:255] or fallback


async def connect_token_account(
    session: Session,
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    settings: Settings,
    owner_id: int,
    app: App,
    values: dict[str, str],
    count: int,
    fields: Sequence[TokenField] | None = None,
) -> AppAccount:
    """``fields``: the token fields to read (default: the app's; an OAuth2 app's ``token_method`` fields)."""
    wanted = app.auth.fields if fields is None else fields
    credentials = {f.key: (values.get(f.key) or f.default or "").strip() for f in wanted}
    missing = [f.label for f in wanted if f.required and not credentials[f.key]]
    if missing:
        raise AppCallError("Please fill " + ", ".join(missing))
    label = await _label_from_test(http, guard, app, credentials, f"{app.name} Account #{count + 1}")
    return await run_db(
        session,
        app_accounts.create_account,
        owner_id=owner_id,
        app_id=app.id,
        app_key=app.key,
        label=label,
        credentials=credentials,
        cipher=cipher(settings),
    )


async def connect_oauth_account(
    session: Session,
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    settings: Settings,
    owner_id: int,
    app: App,
    tokens: dict[str, Any],
    expires_at: datetime | None,
    account_id: int | None,
    count: int,
) -> AppAccount:
    label = await _label_from_test(http, guard, app, tokens, f"{app.name} Account #{count + 1}")
    return await run_db(
        session,
        _store_oauth_account,
        settings=settings,
        owner_id=owner_id,
        app=app,
        tokens=tokens,
        expires_at=expires_at,
        account_id=account_id,
        label=label,
    )


def _store_oauth_account(
    session: Session,
    *,
    settings: Settings,
    owner_id: int,
    app: App,
    tokens: dict[str, Any],
    expires_at: datetime | None,
    account_id: int | None,
    label: str,
) -> AppAccount:
    """The tokens of an OAuth2 authorization: the account reconnected, or a new one (``run_db``)."""
    box = cipher(settings)
    if account_id is not None:
        account = app_accounts.get_account(session, owner_id=owner_id, account_id=account_id)
        if account is not None and account.app_id == app.id:
            app_accounts.store_credentials(
                session, account=account, credentials=tokens, cipher=box, expires_at=expires_at
            )
            return account
    return app_accounts.create_account(
        session,
        owner_id=owner_id,
        app_id=app.id,
        app_key=app.key,
        label=label,
        credentials=tokens,
        cipher=box,
        expires_at=expires_at,
    )


async def refresh_credentials(
    session: Session, *, http: httpx.AsyncClient, guard: NetGuard, settings: Settings, account: AppAccount, app: App
) -> dict[str, Any]:
    box = cipher(settings)
    credentials = app_accounts.credentials_of(account, cipher=box)
    if not credentials.get("refresh_token"):
        # A pasted token (token_method) or a provider without refresh: no OAuth client is needed to say so.
        raise AppCallError(f"The {app.name} account's token was refused or expired: connect the account again")
    client = await run_db(session, oauth_client, settings, app)
    fresh, expires_at = await refresh(http, guard, app, client, credentials=credentials)
    await run_db(
        session, app_accounts.store_credentials, account=account, credentials=fresh, cipher=box, expires_at=expires_at
    )
    return fresh


async def fresh_credentials(
    session: Session, *, http: httpx.AsyncClient, guard: NetGuard, settings: Settings, account: AppAccount, app: App
) -> dict[str, Any]:
    expires = account.token_expires_at
    if app.auth.type == "oauth2" and expires is not None and expires - REFRESH_MARGIN <= datetime.now(UTC):
        return await refresh_credentials(session, http=http, guard=guard, settings=settings, account=account, app=app)
    return app_accounts.credentials_of(account, cipher=cipher(settings))


async def call_with_account(
    session: Session,
    *,
    http: httpx.AsyncClient,
    guard: NetGuard,
    settings: Settings,
    account: AppAccount,
    app: App,
    build: Callable[[dict[str, Any]], AppRequest],
    hooks: Sequence[str],
) -> Reply:
    credentials = await fresh_credentials(session, http=http, guard=guard, settings=settings, account=account, app=app)
    reply = await call_app(
        http, guard, build(credentials), secrets=secret_values(app, credentials), raise_for_status=False
    )
    if app.auth.type == "oauth2" and is_expired(app.auth.expiry, reply.status, reply.body):
        credentials = await refresh_credentials(
            session, http=http, guard=guard, settings=settings, account=account, app=app
        )
        reply = await call_app(
            http, guard, build(credentials), secrets=secret_values(app, credentials), raise_for_status=False
        )
    if reply.status >= 400:
        raise AppCallError(f"{app.name} answered HTTP {reply.status}", status=reply.status, body=reply.body)
    problem = hook_error(hooks, reply.body)
    if problem:
        raise AppCallError(problem, status=reply.status, body=reply.body)
    return reply
