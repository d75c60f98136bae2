"""Dependencies shared by the routes: settings, database session, the signed-in user."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from konnectz_api.bus import Bus
from konnectz_api.core.config import Settings, get_settings
from konnectz_api.core.security import AccessClaims, decode_access_claims
from konnectz_api.crud import sessions
from konnectz_api.db import get_session
from konnectz_api.deployer import Deployer
from konnectz_api.errors import Unauthorized
from konnectz_api.models import User

SettingsDep = Annotated[Settings, Depends(get_settings)]
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
    user = session.get(User, claims.user_id) if claims is not None and 0 < claims.user_id < 2**63 else None
    if claims is None or user is None or sessions.is_revoked(session, claims=claims, user=user):
        raise Unauthorized("Your session has expired. Please sign in again.")
    return user, claims


def current_user(signed_in: Annotated[tuple[User, AccessClaims], Depends(current_claims)]) -> User:
    return signed_in[0]


CurrentUser = Annotated[User, Depends(current_user)]
CurrentClaims = Annotated[tuple[User, AccessClaims], Depends(current_claims)]


def get_bus(request: Request) -> Bus:
    bus: Bus = request.app.state.bus
    return bus


def get_deployer(request: Request) -> Deployer:
    deployer: Deployer = request.app.state.deployer
    return deployer


BusDep = Annotated[Bus, Depends(get_bus)]
DeployerDep = Annotated[Deployer, Depends(get_deployer)]
