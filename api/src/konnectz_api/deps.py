"""Dependencies shared by the routes: settings, database session, the signed-in user."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from konnectz_api.bus import Bus
from konnectz_api.core.config import Settings, get_settings
from konnectz_api.core.security import decode_access_token
from konnectz_api.db import get_session
from konnectz_api.deployer import Deployer
from konnectz_api.errors import Unauthorized
from konnectz_api.models import User

SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionDep = Annotated[Session, Depends(get_session)]
_bearer = HTTPBearer(auto_error=False)


def current_user(
    session: SessionDep,
    settings: SettingsDep,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    if creds is None:
        raise Unauthorized("Sign in to continue")
    user_id = decode_access_token(creds.credentials, secret=settings.secret_key)
    user = session.get(User, user_id) if user_id is not None else None
    if user is None:
        raise Unauthorized("Your session has expired. Please sign in again.")
    return user


CurrentUser = Annotated[User, Depends(current_user)]


def get_bus(request: Request) -> Bus:
    bus: Bus = request.app.state.bus
    return bus


def get_deployer(request: Request) -> Deployer:
    deployer: Deployer = request.app.state.deployer
    return deployer


BusDep = Annotated[Bus, Depends(get_bus)]
DeployerDep = Annotated[Deployer, Depends(get_deployer)]
