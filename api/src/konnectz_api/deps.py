"""Dependencies shared by the routes: settings, database session, the signed-in user.

Dependencies that do no blocking I/O are ``async def`` so FastAPI calls them on the event loop
instead of handing each to the thread pool (a thread hop per dependency per request). The sign-in
check is one query: the user and whether the token was revoked.

- ``SignedInUser``: the person who signed in (their own profile, password, sessions).
- ``CurrentUser``: the account whose data a call reads or changes. For a team member that is the account
  they were added to, and the member's access level is checked here, on every call, before the route
  runs (:mod:`konnectz_api.crud.members`); each change a member makes is written to the audit log.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from konnectz_api.bus import Bus
from konnectz_api.core.config import Settings, get_settings
from konnectz_api.core.security import AccessClaims, decode_access_claims
from konnectz_api.crud import members, sessions
from konnectz_api.db import get_session
from konnectz_api.deployer import Deployer
from konnectz_api.errors import Forbidden, Unauthorized
from konnectz_api.models import User


async def app_settings() -> Settings:
    """The settings (override this in tests, not ``get_settings``)."""
    return get_settings()


SettingsDep = Annotated[Settings, Depends(app_settings)]
SessionDep = Annotated[Session, Depends(get_session)]
_bearer = HTTPBearer(auto_error=False)


def current_claims(
    session: SessionDep,
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> tuple[User, AccessClaims]:
    if creds is None:
        raise Unauthorized("Sign in to continue")
    claims = decode_access_claims(creds.credentials, secret=settings.secret_key)
    user = sessions.signed_in(session, claims=claims) if claims is not None and 0 < claims.user_id < 2**63 else None
    if claims is None or user is None:
        raise Unauthorized("Your session has expired. Please sign in again.")
    return user, claims


async def signed_in_user(signed_in: Annotated[tuple[User, AccessClaims], Depends(current_claims)]) -> User:
    return signed_in[0]


async def _body_status(request: Request) -> str | None:
    """The ``status`` of a JSON body (a flow set to DELETED, an app account set to REMOVE), if any."""
    if request.method in ("GET", "HEAD", "OPTIONS") or "json" not in request.headers.get("content-type", ""):
        return None
    try:
        body = await request.json()
    except ValueError:
        return None  # the route answers the bad body with a 422
    status = body.get("status") if isinstance(body, dict) else None
    return status.upper()[:20] if isinstance(status, str) else None


async def current_user(
    signed_in: Annotated[tuple[User, AccessClaims], Depends(current_claims)],
    session: SessionDep,
    request: Request,
    body_status: Annotated[str | None, Depends(_body_status)],
) -> User:
    user = signed_in[0]
    if user.member_kind != members.TEAM:
        return user
    return await run_in_threadpool(_team_account, session, user, request, body_status)


def _team_account(session: Session, user: User, request: Request, body_status: str | None) -> User:
    """The account a team member works in, after checking (and auditing) their access level."""
    account = session.get(User, user.parent_id) if user.parent_id is not None else None
    if account is None:
        raise Unauthorized("Your session has expired. Please sign in again.")
    level = members.required_level(request.method, request.url.path, body_status)
    allowed = members.allows(user.access, level)
    if level != members.READ:
        members.audit(
            session,
            account_id=account.id,
            actor=user,
            action=f"{request.method} {request.url.path}" + (f" status={body_status}" if body_status else ""),
            outcome="allowed" if allowed else "denied",
            address=request.client.host if request.client else None,
        )
    if not allowed:
        raise Forbidden(members.denied_message(user.access, level), key="ACCESS_DENIED")
    return account


CurrentUser = Annotated[User, Depends(current_user)]
SignedInUser = Annotated[User, Depends(signed_in_user)]
CurrentClaims = Annotated[tuple[User, AccessClaims], Depends(current_claims)]


async def get_bus(request: Request) -> Bus:
    bus: Bus = request.app.state.bus
    return bus


async def get_deployer(request: Request) -> Deployer:
    deployer: Deployer = request.app.state.deployer
    return deployer


BusDep = Annotated[Bus, Depends(get_bus)]
DeployerDep = Annotated[Deployer, Depends(get_deployer)]
