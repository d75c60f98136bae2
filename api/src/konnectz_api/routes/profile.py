"""The signed-in user's own profile: editable fields, country/time-zone lists, password change."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from konnectz_api.core.security import hash_password, verify_password
from konnectz_api.crud import users as crud
from konnectz_api.deps import CurrentUser, SessionDep
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


def _update(body: ProfileUpdate, user: CurrentUser, session: SessionDep) -> ProfileReply:
    try:
        crud.update_profile(session, user=user, changes=body)
    except crud.InvalidProfile as exc:
        session.rollback()
        raise Unprocessable(str(exc), key="UPDATE_FAILED") from exc
    return ProfileReply(key="UPDATE_SUCCESS", message="Profile updated", profile=Profile.model_validate(user))


@router.post("/profile", response_model=ProfileReply, summary="Update the profile", description=_EDIT_DOC)
def post_profile(body: ProfileUpdate, user: CurrentUser, session: SessionDep) -> ProfileReply:
    return _update(body, user, session)


@router.post("/update_user", response_model=ProfileReply, summary="Update the profile", description=_EDIT_DOC)
def update_user(body: ProfileUpdate, user: CurrentUser, session: SessionDep) -> ProfileReply:
    return _update(body, user, session)


@router.get(
    "/profile/options",
    response_model=ProfileOptions,
    summary="Country and time-zone choices",
    description="ISO 3166 countries (pycountry) and IANA time zones labelled with their current GMT offset.",
)
def profile_options(user: CurrentUser) -> ProfileOptions:
    return crud.profile_options()


@router.post(
    "/change_password",
    response_model=KeyReply,
    summary="Change the password (needs the current one)",
    responses={400: {"description": "wrong current password"}, 422: {"description": "mismatch or too short"}},
)
async def change_password(body: ChangePasswordIn, user: CurrentUser, session: SessionDep) -> KeyReply:
    if body.password != body.password_confirmation:
        raise Unprocessable(PASSWORD_MISMATCH, key="PASSWORD_MISMATCH")
    if not await run_in_threadpool(verify_password, user.password_hash, body.current_password):
        raise BadRequest(WRONG_CURRENT, key="WRONG_PASSWORD")
    crud.set_password(session, user=user, password_hash=await run_in_threadpool(hash_password, body.password))
    return KeyReply(key="UPDATE_SUCCESS", message="Password updated")
