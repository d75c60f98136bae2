"""App accounts: list, connect (token fields or OAuth2 with PKCE), rename, remove.

Credentials are encrypted at rest and never part of a reply or a log line.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse

from konnectz_api.catalogue import AppIndex, get_index
from konnectz_api.crud import admins, app_accounts, members, oauth_clients
from konnectz_api.db import run_db
from konnectz_api.deps import AccountAt, BusDep, CurrentUser, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import BadRequest, Conflict, Forbidden, NotFound
from konnectz_api.models import AppAccount, User
from konnectz_api.schemas import (
    AccountStatusOut,
    AppAccountList,
    AppAccountOut,
    AuthorizationIn,
    AuthorizationOut,
    AuthUrlIn,
    AuthUrlOut,
    McpToolList,
    Message,
    OAuthClientIn,
    OAuthClientOut,
    RateBudgetIn,
    RateBudgetOut,
    TokenFieldOut,
    UpdateAccountStatusIn,
    UpdateLabelIn,
)
from konnectz_api.services import mcp_tools, oauth, rate_budgets
from konnectz_api.services.app_calls import AppCallError, app_client
from konnectz_api.services.credential_broker import cipher, connect_oauth_account, connect_token_account, oauth_client
from konnectz_api.step_secrets import MASK
from konnectz_contracts.manifest import App, TokenField

router = APIRouter(prefix="/api/v1", tags=["app accounts"])

IndexDep = Annotated[AppIndex, Depends(get_index)]
AccountIdPath = Annotated[int, Path(ge=1, lt=2**63)]
IN_USE = "Cannot delete this account as it contains active Konnectz"
ADDED = "Account added successfully"
BAD_STATE = "The authorisation expired or was already used. Please try again."


def _app(index: AppIndex, app_id: int) -> App:
    app = index.get(app_id)
    if app is None:
        raise NotFound(f"App {app_id} not found")
    return app


def _token_fields(fields: list[TokenField]) -> list[TokenFieldOut]:
    return [
        TokenFieldOut(id=f.key, name=f.label, instructions=f.help, secret=f.secret, required=f.required) for f in fields
    ]


def _check_redirect(settings: SettingsDep, redirect_url: str) -> str:
    base = settings.public_url.rstrip("/") + "/"
    if not redirect_url.startswith(base):
        raise BadRequest(f"redirect_url must be a page of {settings.public_url}")
    return redirect_url


@router.get(
    "/apps/{app_id}/authorized_app_accounts",
    response_model=AppAccountList,
    tags=["apps"],
    summary="The caller's accounts of an app",
)
async def authorized_app_accounts(
    user: CurrentUser,
    session: SessionDep,
    index: IndexDep,
    bus: BusDep,
    app_id: Annotated[int, Path(ge=1, lt=2**31)],
) -> AppAccountList:
    app = _app(index, app_id)
    accounts = await run_db(session, app_accounts.list_accounts, owner_id=user.id, app_id=app.id)
    budgets = await rate_budgets.budgets_of(bus, app, accounts)
    return AppAccountList(
        authorized_app_accounts=[
            AppAccountOut(id=a.id, name=a.label, created_at=a.created_at, rate_budget=b)
            for a, b in zip(accounts, budgets, strict=True)
        ]
    )


@router.post(
    "/auth-url",
    response_model=AuthUrlOut,
    summary="How to connect an account of an app",
    responses={404: {"model": Message, "description": "No such app in the catalogue"}},
)
def auth_url(
    body: AuthUrlIn, user: CurrentUser, session: SessionDep, settings: SettingsDep, index: IndexDep
) -> AuthUrlOut:
    """OAuth2 apps: the consent URL (PKCE S256, a signed single-use state). Token apps: the fields."""
    app = _app(index, body.app_id)
    auth = app.auth
    if auth.type == "none":
        return AuthUrlOut(type="none", auth_url=None)
    if auth.type != "oauth2":
        return AuthUrlOut(
            type="token", auth_url=None, fields=_token_fields(auth.fields), instructions=auth.instructions
        )
    if body.method == "token":
        if auth.token_method is None:
            raise BadRequest(f"{app.name} connects through OAuth2 only")
        method = auth.token_method
        return AuthUrlOut(
            type="token", auth_url=None, fields=_token_fields(method.fields), instructions=method.instructions
        )
    redirect_url = _check_redirect(settings, body.redirect_url)
    try:
        client = oauth_client(session, settings, app)
    except AppCallError as exc:
        raise BadRequest(str(exc)) from exc
    if body.app_user_id is not None:
        account = app_accounts.get_account(session, owner_id=user.id, account_id=body.app_user_id)
        if account is None or account.app_id != app.id:
            raise NotFound("Account not found")
    verifier, challenge = oauth.new_pkce()
    nonce = secrets.token_urlsafe(24)
    ttl = timedelta(minutes=settings.oauth_state_minutes)
    app_accounts.create_state(
        session,
        nonce=nonce,
        owner_id=user.id,
        app_id=app.id,
        app_account_id=body.app_user_id,
        redirect_url=redirect_url,
        verifier=cipher(settings).encrypt({"v": verifier}),
        ttl=ttl,
    )
    state = oauth.sign_state(nonce=nonce, app_id=app.id, user_id=user.id, secret=settings.secret_key, ttl=ttl)
    url = oauth.authorize_url(app, client, redirect_url=redirect_url, state=state, challenge=challenge)
    return AuthUrlOut(type="oauth", auth_url=url)


@router.post(
    "/authorization",
    response_model=AuthorizationOut,
    summary="Connect an account: token fields (tested first) or the OAuth2 code",
    responses={
        400: {"description": "The test request failed or the authorisation is invalid; message says why"},
        404: {"model": Message, "description": "No such app in the catalogue"},
    },
)
async def authorization(
    body: AuthorizationIn, user: CurrentUser, session: SessionDep, settings: SettingsDep, index: IndexDep
) -> AuthorizationOut:
    app = _app(index, body.app_id)
    count = len(await run_db(session, app_accounts.list_accounts, owner_id=user.id, app_id=app.id))
    try:
        async with app_client(settings) as (http, guard):
            if app.auth.type == "none":
                raise BadRequest(f"{app.name} needs no account")
            token_method = app.auth.token_method if body.method == "token" else None
            if body.method == "token" and app.auth.type == "oauth2" and token_method is None:
                raise BadRequest(f"{app.name} connects through OAuth2 only")
            if app.auth.type != "oauth2" or token_method is not None:
                fields = token_method.fields if token_method is not None else app.auth.fields
                unknown = set(body.auth_response) - {f.key for f in fields}
                if unknown:
                    raise BadRequest(f"Unknown fields: {', '.join(sorted(unknown))}")
                account = await connect_token_account(
                    session,
                    http=http,
                    guard=guard,
                    settings=settings,
                    owner_id=user.id,
                    app=app,
                    values=body.auth_response,
                    count=count,
                    fields=fields,
                )
            else:
                if "error" in body.auth_response:
                    raise BadRequest(f"{app.name} did not authorise the account: {body.auth_response['error'][:200]}")
                claims = oauth.read_state(body.auth_response.get("state", ""), secret=settings.secret_key)
                pending = (
                    await run_db(session, app_accounts.take_state, nonce=claims["n"], owner_id=user.id)
                    if claims is not None
                    else None
                )
                code = body.auth_response.get("code", "")
                if (
                    pending is None
                    or pending.app_id != app.id
                    or claims is None
                    or claims.get("u") != user.id
                    or not code
                ):
                    raise BadRequest(BAD_STATE)
                verifier = cipher(settings).decrypt(pending.verifier)["v"]
                tokens, expires_at = await oauth.exchange_code(
                    http,
                    guard,
                    app,
                    await run_db(session, oauth_client, settings, app),
                    code=code,
                    verifier=verifier,
                    redirect_url=pending.redirect_url,
                )
                account = await connect_oauth_account(
                    session,
                    http=http,
                    guard=guard,
                    settings=settings,
                    owner_id=user.id,
                    app=app,
                    tokens=tokens,
                    expires_at=expires_at,
                    account_id=pending.app_account_id,
                    count=count,
                )
    except AppCallError as exc:
        raise BadRequest(str(exc), status=str(exc)) from exc
    return AuthorizationOut(status=ADDED, app_user_id=account.id, name=account.label)


@router.post("/app_users/{account_id}/update_label", response_model=Message, summary="Rename an account")
def update_label(account_id: AccountIdPath, body: UpdateLabelIn, user: CurrentUser, session: SessionDep) -> Message:
    account = app_accounts.get_account(session, owner_id=user.id, account_id=account_id)
    if account is None:
        raise NotFound("Account not found")
    app_accounts.rename_account(session, account=account, label=body.label)
    return Message(message="SUCCESS")


def _owned_account(session: SessionDep, user: User, account_id: int) -> AppAccount:
    account = app_accounts.get_account(session, owner_id=user.id, account_id=account_id)
    if account is None:
        raise NotFound("Account not found")
    return account


@router.get(
    "/app_users/{account_id}/mcp_tools",
    response_model=McpToolList,
    summary="The tools of an MCP Server account's server, with their arguments as fields (docs/mcp.md)",
    responses={
        400: {"model": Message, "description": "Refused here: a private address not allowed, not an http(s) URL"},
        404: {"model": Message, "description": "No such MCP Server account of the caller"},
        502: {"model": Message, "description": "The server could not be reached, answered an error, or is not MCP"},
        504: {"model": Message, "description": "The server did not answer within 15 s"},
    },
)
async def list_mcp_tools(
    account_id: AccountIdPath, user: CurrentUser, session: SessionDep, settings: SettingsDep, index: IndexDep
) -> McpToolList:
    return await mcp_tools.account_tools(session, settings, index, user, account_id)


@router.get(
    "/app_users/{account_id}/rate_budget",
    response_model=RateBudgetOut,
    summary="An account's rate budget: its rate, where it comes from, its use (docs/rate-budgets.md)",
    responses={404: {"model": Message}},
)
async def get_rate_budget(
    account_id: AccountIdPath, user: CurrentUser, session: SessionDep, index: IndexDep, bus: BusDep
) -> RateBudgetOut:
    account = await run_db(session, _owned_account, user, account_id)
    return await rate_budgets.budget_of(bus, index.get(account.app_id), account)


@router.put(
    "/app_users/{account_id}/rate_budget",
    response_model=RateBudgetOut,
    summary="Set (or clear, with null) an account's rate budget override, in requests per second",
    responses={404: {"model": Message}, 422: {"description": "rate_limit_rps is not between 0.01 and 1000"}},
)
async def put_rate_budget(
    account_id: AccountIdPath,
    body: RateBudgetIn,
    user: CurrentUser,
    session: SessionDep,
    index: IndexDep,
    bus: BusDep,
) -> RateBudgetOut:
    """Runners use the new rate from the account's next credential fetch (each step run fetches it)."""
    account = await run_db(session, _rate_limit_set, user, account_id, body.rate_limit_rps)
    return await rate_budgets.budget_of(bus, index.get(account.app_id), account)


def _rate_limit_set(session: SessionDep, user: User, account_id: int, rate_limit_rps: float | None) -> AppAccount:
    account = _owned_account(session, user, account_id)
    app_accounts.set_rate_limit(session, account=account, rate_limit_rps=rate_limit_rps)
    return account


#: The only status this route takes is REMOVE: a team member needs Create/Delete, read from the parsed body.
_REMOVE_ACCESS = AccountAt(
    UpdateAccountStatusIn, lambda b: members.status_level(b.status), lambda b: f"status={b.status}"
)


@router.post(
    "/app_users/{account_id}/update_status",
    response_model=AccountStatusOut,
    summary="Remove an account (refused while a published konnect uses it)",
    responses={409: {"model": AccountStatusOut, "description": "FAILURE: a published konnect uses the account"}},
)
def update_status(
    account_id: AccountIdPath,
    body: UpdateAccountStatusIn,
    user: Annotated[User, Depends(_REMOVE_ACCESS)],
    session: SessionDep,
) -> AccountStatusOut | JSONResponse:
    account = app_accounts.get_account(session, owner_id=user.id, account_id=account_id)
    if account is None:
        raise NotFound("Account not found")
    if app_accounts.in_use_by_published(session, owner_id=user.id, account_id=account.id):
        return JSONResponse({"message": "FAILURE", "details": IN_USE}, status_code=409)
    app_accounts.remove_account(session, account=account)
    return AccountStatusOut(message="SUCCESS", details="Account removed")


# --- OAuth apps entered in the UI (konnectz_api.crud.oauth_clients: who may, and env-wins) ---------------

OAUTH_RESPONSE_PATH = "/oauth/response"
OAuthAppIdPath = Annotated[int, Path(ge=1, lt=2**31)]
#: The reply of an OAuth client route for an app that does not use OAuth2 (:func:`_oauth_app`).
_NOT_OAUTH2: dict[str, Any] = {"model": Message, "description": "The app does not use OAuth2"}


#: The 403 of the admin routes: who may, and how one becomes an administrator.
NOT_AN_ADMINISTRATOR = f"Only an administrator can configure OAuth apps. {admins.HOW_TO_NAME}"


def _oauth_app(index: AppIndex, app_id: int) -> App:
    app = _app(index, app_id)
    if app.auth.type != "oauth2":
        raise BadRequest(f"{app.name} does not use OAuth2")
    return app


def _client_out(session: SessionDep, settings: SettingsDep, app: App, *, can_configure: bool) -> OAuthClientOut:
    found = oauth_clients.resolve(session, settings, app.key, cipher=None)
    return OAuthClientOut(
        app_id=app.id,
        app_key=app.key,
        configured=found is not None,
        source=found.source if found else None,
        client_id=found.client_id if found and can_configure else None,
        client_secret=MASK if found and can_configure else None,
        redirect_url=settings.public_url.rstrip("/") + OAUTH_RESPONSE_PATH,
        can_configure=can_configure,
        who_can_configure=NOT_AN_ADMINISTRATOR,
        token_method=app.auth.token_method.label if app.auth.token_method else None,
    )


def oauth_admin(user: SignedInUser, settings: SettingsDep) -> User:
    """An administrator, named by the installer (konnectz_api.crud.admins); checked before the body."""
    if not oauth_clients.can_configure(user, settings):
        raise Forbidden(NOT_AN_ADMINISTRATOR)
    return user


OAuthAdmin = Annotated[User, Depends(oauth_admin)]


@router.get(
    "/apps/{app_id}/oauth_client",
    response_model=OAuthClientOut,
    tags=["apps"],
    summary="Whether an OAuth2 app can be connected on this server, and the redirect URL to register",
    responses={400: _NOT_OAUTH2},
)
def get_oauth_client(
    app_id: OAuthAppIdPath, user: SignedInUser, session: SessionDep, settings: SettingsDep, index: IndexDep
) -> OAuthClientOut:
    app = _oauth_app(index, app_id)
    return _client_out(session, settings, app, can_configure=oauth_clients.can_configure(user, settings))


@router.put(
    "/admin/oauth_clients/{app_id}",
    response_model=OAuthClientOut,
    summary="Enter an OAuth2 app's client id and secret (administrators; the secret is stored encrypted)",
    responses={
        403: {"model": Message, "description": "not an administrator (the message says how one is named)"},
        409: {"description": "set by KONNECTZ_OAUTH_CLIENTS"},
    },
)
def put_oauth_client(
    app_id: OAuthAppIdPath,
    body: OAuthClientIn,
    user: OAuthAdmin,
    session: SessionDep,
    settings: SettingsDep,
    index: IndexDep,
) -> OAuthClientOut:
    app = _oauth_app(index, app_id)
    found = oauth_clients.resolve(session, settings, app.key, cipher=None)
    if found is not None and found.source == "environment":
        raise Conflict(
            f"{app.name}'s OAuth app is set by KONNECTZ_OAUTH_CLIENTS on the server, which wins; change it there"
        )
    secret = body.client_secret.strip()
    keep = secret in ("", MASK)
    if keep and found is None:
        raise BadRequest("Please fill Client Secret")
    oauth_clients.save(
        session,
        app_key=app.key,
        client_id=body.client_id.strip(),
        client_secret=None if keep else secret,
        cipher=cipher(settings),
        user_id=user.id,
    )
    return _client_out(session, settings, app, can_configure=True)


@router.delete(
    "/admin/oauth_clients/{app_id}",
    response_model=OAuthClientOut,
    summary="Remove an OAuth2 app's client entered in the UI (administrators)",
    responses={
        400: _NOT_OAUTH2,
        403: {"model": Message, "description": "not an administrator (the message says how one is named)"},
    },
)
def delete_oauth_client(
    app_id: OAuthAppIdPath, user: OAuthAdmin, session: SessionDep, settings: SettingsDep, index: IndexDep
) -> OAuthClientOut:
    app = _oauth_app(index, app_id)
    oauth_clients.remove(session, app.key)
    return _client_out(session, settings, app, can_configure=True)
