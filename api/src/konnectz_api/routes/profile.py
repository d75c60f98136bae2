"""The signed-in user's own profile: editable fields, country/time-zone lists, password change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from konnectz_api.core.config import Settings
from konnectz_api.core.security import create_access_token, hash_password, verify_password
from konnectz_api.crud import avatars
from konnectz_api.crud import users as crud
from konnectz_api.deps import CurrentClaims, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import BadRequest, PayloadTooLarge, Unprocessable
from konnectz_api.models import User
from konnectz_api.schemas import ChangePasswordIn, KeyReply, Profile, ProfileOptions, ProfileUpdate

router = APIRouter(prefix="/api/v1/users", tags=["profile"])

PASSWORD_MISMATCH = "Password do not match. Try again!"  # noqa: S105 - a message
WRONG_CURRENT = "Your current password is not correct."
SELECT_IMAGE = "Select the image before uploading."

_EDIT_DOC = (
    "Changes first_name, last_name, country (ISO 3166-1 alpha-2) and timezone (IANA name). "
    "is_admin, current_plan, free_task, the payment customer id, preferred_language, image_url and email "
    "are ignored when sent. Reply key UPDATE_SUCCESS with the updated profile."
)


class ProfileReply(KeyReply):
    profile: Profile


class PasswordChanged(KeyReply):
    auth_token: str


def _update(body: ProfileUpdate, user: SignedInUser, session: SessionDep, settings: Settings) -> ProfileReply:
    try:
        crud.update_profile(session, user=user, changes=body)
    except crud.InvalidProfile as exc:
        session.rollback()
        raise Unprocessable(str(exc), key="UPDATE_FAILED") from exc
    return ProfileReply(key="UPDATE_SUCCESS", message="Profile updated", profile=crud.profile_of(user, settings))


_PROFILE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ProfileUpdate"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"image": {"type": "string", "format": "binary"}},
                    "required": ["image"],
                }
            },
        },
    }
}


@router.post(
    "/profile",
    response_model=ProfileReply,
    summary="Update the profile (JSON) or the avatar (multipart)",
    description=(
        _EDIT_DOC + " Sent as multipart/form-data with a file field `image`: the avatar. Its type is checked by its "
        "content (PNG, JPEG, GIF or WebP), its size is capped (KONNECTZ_AVATAR_MAX_BYTES, 413 beyond), and it "
        "is re-encoded as a PNG of at most 512x512 without metadata, served at the reply's image_url. An empty "
        "`image` removes the avatar; no `image` field: 400 'Select the image before uploading.'"
    ),
    openapi_extra=_PROFILE_BODY,
    responses={
        400: {"description": "No image field, or not an image"},
        413: {"description": "The image is too large"},
        422: {"description": "Invalid profile fields"},
    },
)
async def post_profile(
    request: Request, user: SignedInUser, session: SessionDep, settings: SettingsDep
) -> ProfileReply:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await _avatar(request, user, session, settings)
    try:
        body = ProfileUpdate.model_validate_json(await request.body())
    except ValidationError as exc:
        raise Unprocessable(f"Invalid profile: {exc.errors()[0]['msg']}", key="UPDATE_FAILED") from exc
    return await run_in_threadpool(_update, body, user, session, settings)


async def _avatar(request: Request, user: User, session: SessionDep, settings: Settings) -> ProfileReply:
    limit = settings.avatar_max_bytes
    too_large = PayloadTooLarge(f"The image is too large: at most {limit // 1024} KB.")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + 64 * 1024:
        raise too_large
    try:
        form = await request.form(max_files=1, max_fields=10)
    except ClientDisconnect:
        raise  # the client went away: one log line (konnectz_api.errors)
    except Exception as exc:  # malformed multipart, too many parts
        raise BadRequest(f"The upload could not be read: {exc}") from exc
    try:
        image = form.get("image")
        if image is None:
            raise BadRequest(SELECT_IMAGE, key="UPDATE_FAILED")
        if isinstance(image, str):
            data = image.encode()[: limit + 1]
        else:
            data = await image.read(limit + 1)
    finally:
        await form.close()
    if len(data) > limit:
        raise too_large
    if not data:
        await run_in_threadpool(avatars.remove_avatar, session, user=user)
        return ProfileReply(key="UPDATE_SUCCESS", message="Picture removed", profile=crud.profile_of(user, settings))
    try:
        png = await run_in_threadpool(avatars.reencode, data)
    except avatars.InvalidImage as exc:
        raise BadRequest(str(exc), key="UPDATE_FAILED") from exc
    await run_in_threadpool(avatars.set_avatar, session, user=user, png=png, public_url=settings.public_url)
    return ProfileReply(key="UPDATE_SUCCESS", message="Picture updated", profile=crud.profile_of(user, settings))


@router.post("/update_user", response_model=ProfileReply, summary="Update the profile", description=_EDIT_DOC)
def update_user(body: ProfileUpdate, user: SignedInUser, session: SessionDep, settings: SettingsDep) -> ProfileReply:
    return _update(body, user, session, settings)


@router.get(
    "/profile/options",
    response_model=ProfileOptions,
    summary="Country and time-zone choices",
    description="ISO 3166 countries (pycountry) and IANA time zones labelled with their current GMT offset.",
)
def profile_options(user: SignedInUser) -> ProfileOptions:
    return crud.profile_options()


def _fresh_token(settings: Settings, user_id: int, expires_at: datetime, session_version: int) -> str:
    lifetime = max(expires_at - datetime.now(UTC), timedelta(minutes=1))
    return create_access_token(
        user_id=user_id, secret=settings.secret_key, lifetime=lifetime, session_version=session_version
    )


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
def change_password(
    body: ChangePasswordIn, signed_in: CurrentClaims, session: SessionDep, settings: SettingsDep
) -> PasswordChanged:
    user, claims = signed_in
    if body.password != body.password_confirmation:
        raise Unprocessable(PASSWORD_MISMATCH, key="PASSWORD_MISMATCH")
    if not verify_password(user.password_hash, body.current_password):
        raise BadRequest(WRONG_CURRENT, key="WRONG_PASSWORD")
    version = crud.set_password(session, user=user, password_hash=hash_password(body.password))
    token = _fresh_token(settings, user.id, claims.expires_at, version)
    return PasswordChanged(key="UPDATE_SUCCESS", message="Password updated", auth_token=token)
