"""The signed-in user's own profile: editable fields, country/time-zone lists, password change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from konnectz_api.core.config import Settings
from konnectz_api.core.security import create_access_token, hash_password, verify_password
from konnectz_api.crud import users as crud
from konnectz_api.deps import CurrentClaims, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import BadRequest, Unprocessable
from konnectz_api.schemas import ChangePasswordIn, KeyReply, Profile, ProfileOptions, ProfileUpdate

router = APIRouter(prefix="/api/v1/users", tags=["profile"])

PASSWORD_MISMATCH = "Password do not match. Try again!"  # noqa: S105 - a message
WRONG_CURRENT = "Your current password is not correct."

_EDIT_DOC = (
    "Changes first_name, last_name, country (ISO 3166-1 alpha-2) and timezone (IANA name). "
    "is_admin, current_plan, free_task, the payment customer id, preferred_language, image_url and email "
    "are ignored when sent. Reply key UPDATE_SUCCESS with the updated profile."
)


class ProfileReply(KeyReply):
    profile: Profile


class PasswordChanged(KeyReply):
    auth_token: str


def _update(body: ProfileUpdate, user: SignedInUser, session: SessionDep) -> ProfileReply:
    try:
        crud.update_profile(session, user=user, changes=body)
    except crud.InvalidProfile as exc:
        session.rollback()
        raise Unprocessable(str(exc), key="UPDATE_FAILED") from exc
    return ProfileReply(key="UPDATE_SUCCESS", message="Profile updated", profile=Profile.model_validate(user))


@router.post("/profile", response_model=ProfileReply, summary="Update the profile", description=_EDIT_DOC)
def post_profile(body: ProfileUpdate, user: SignedInUser, session: SessionDep) -> ProfileReply:
    return _update(body, user, session)


@router.post("/update_user", response_model=ProfileReply, summary="Update the profile", description=_EDIT_DOC)
def update_user(body: ProfileUpdate, user: SignedInUser, session: SessionDep) -> ProfileReply:
    return _update(body, user, session)


@router.get(
    "/profile/options",
    response_model=ProfileOptions,
    summary="Country and time-zone choices",
    description="ISO 3166 countries (pycountry) and IANA time zones labelled with their current GMT offset.",
)
def profile_options(user: SignedInUser) -> ProfileOptions:
    return crud.profile_options()


def _fresh_token(settings: Settings, user_id: int, expires_at: datetime) -> str:
    lifetime = max(expires_at - datetime.now(UTC), timedelta(minutes=1))
    return create_access_token(user_id=user_id, secret=settings.secret_key, lifetime=lifetime)


@router.post(
    "/change_password",
    response_model=PasswordChanged,
    summary="Change the password (needs the current one)",
    description=(
        "Every session of the user ends (tokens issued before the change are refused); the reply carries a "
        "new auth_token for this browser, valid as long as the one it replaces."
    ),
    responses={400: {"description": "wrong current password"}, 422: {"description": "mismatch or too short"}},
)
async def change_password(
    body: ChangePasswordIn, signed_in: CurrentClaims, session: SessionDep, settings: SettingsDep
) -> PasswordChanged:
    user, claims = signed_in
    if body.password != body.password_confirmation:
        raise Unprocessable(PASSWORD_MISMATCH, key="PASSWORD_MISMATCH")
    if not await run_in_threadpool(verify_password, user.password_hash, body.current_password):
        raise BadRequest(WRONG_CURRENT, key="WRONG_PASSWORD")
    crud.set_password(session, user=user, password_hash=await run_in_threadpool(hash_password, body.password))
    token = _fresh_token(settings, user.id, claims.expires_at)
    return PasswordChanged(key="UPDATE_SUCCESS", message="Password updated", auth_token=token)
