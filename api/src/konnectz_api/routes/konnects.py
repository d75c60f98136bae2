"""Konnects (flows): list, load for editing, save as draft, publish, change status."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from konnectz_api.compile import TRIGGER_NOT_CHOSEN, CompileError, app_names, compile_flow, find_trigger
from konnectz_api.core.config import Settings
from konnectz_api.core.security import new_token
from konnectz_api.crud import folders as folder_crud
from konnectz_api.crud import konnects as konnect_crud
from konnectz_api.deployer import Deployer, DeployError
from konnectz_api.deps import CurrentUser, DeployerDep, SessionDep, SettingsDep
from konnectz_api.errors import ApiError, NotFound, Unprocessable
from konnectz_api.models import Konnect, User
from konnectz_api.params import MAX_ID, MAX_PAGE_SIZE, IdPath, PageIndex, SearchText
from konnectz_api.schemas import (
    KonnectEdit,
    KonnectItem,
    KonnectList,
    LeftApp,
    Message,
    RightApp,
    SaveKonnectIn,
    SaveKonnectOut,
    UpdateStatusIn,
    UpdateStatusOut,
)

router = APIRouter(prefix="/api/v1/konnects", tags=["konnects"])
DELETED = konnect_crud.DELETED


class DeployUnavailable(ApiError):
    status_code = 503


def webhook_url(settings: Settings, konnect: Konnect) -> str:
    return f"{settings.webhook_base_url.rstrip('/')}/hooks/{konnect.webhook_token}"


def _owned(session: SessionDep, user: User, konnect_id: int) -> Konnect:
    konnect = session.get(Konnect, konnect_id) if 1 <= konnect_id <= MAX_ID else None
    if konnect is None or konnect.owner_id != user.id or konnect.status == DELETED:
        raise NotFound(f"Konnect {konnect_id} not found")
    return konnect


def to_items(page: konnect_crud.Page, settings: Settings) -> list[KonnectItem]:
    items = []
    for k in page.konnects:
        left, right = app_names(k.canvas_json)
        ok, err = page.counts.get(k.id, (0, 0))
        items.append(
            KonnectItem(
                id=k.id,
                konnect_name=k.konnect_name,
                status=k.status,
                created_at=k.created_at,
                success_task_count=ok,
                error_task_count=err,
                left_app=LeftApp(name=left) if left else None,
                right_apps=[RightApp(app_name=n) for n in right],
                webhook_url=webhook_url(settings, k),
                folder_id=k.folder_id,
            )
        )
    return items


def folder_filter(session: SessionDep, user: User, folder: str | None) -> konnect_crud.FolderFilter:
    """``home`` or a folder id of the signed-in user (404 otherwise); ``None`` for every folder."""
    if folder is None:
        return None
    if folder == konnect_crud.HOME:
        return konnect_crud.HOME
    folder_id = int(folder)
    if not 1 <= folder_id <= MAX_ID or folder_crud.get_owned(session, owner_id=user.id, folder_id=folder_id) is None:
        raise NotFound("This folder does'nt exist.", status="FAILURE")
    return folder_id


@router.get(
    "",
    response_model=KonnectList,
    responses={404: {"model": Message, "description": "unknown folder"}},
    summary="The signed-in user's flows, newest first",
)
def list_konnects(
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    page_size: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 20,
    page_index: PageIndex = 1,
    search_query: SearchText = None,
    start_date: Annotated[date | None, Query(description="Created on or after this day (UTC)")] = None,
    end_date: Annotated[date | None, Query(description="Created on or before this day (UTC)")] = None,
    status: Annotated[str | None, Query(pattern="^(Draft|Published)$")] = None,
    include_created_at: bool = True,
    folder: Annotated[
        str | None,
        Query(pattern=r"^(home|\d{1,19})$", description="`home` (flows in no folder) or a folder id; omit for all"),
    ] = None,
) -> KonnectList:
    page = konnect_crud.list_page(
        session,
        owner_id=user.id,
        page_size=page_size,
        page_index=page_index,
        search=search_query,
        start_date=start_date,
        end_date=end_date,
        status=status,
        folder=folder_filter(session, user, folder),
    )
    return KonnectList(konnects=to_items(page, settings), total_konnects=page.total)


@router.get("/{konnect_id}/edit", response_model=KonnectEdit)
def edit_konnect(konnect_id: IdPath, user: CurrentUser, session: SessionDep, settings: SettingsDep) -> KonnectEdit:
    k = _owned(session, user, konnect_id)
    return KonnectEdit(
        konnect_id=k.id,
        konnect_name=k.konnect_name,
        status=k.status,
        canvas_json=k.canvas_json,
        webhook_url=webhook_url(settings, k),
    )


def _store_draft(session: SessionDep, user: User, body: SaveKonnectIn) -> Konnect:
    canvas = body.canvas_json.model_dump(mode="json")
    if find_trigger(canvas) is None:
        raise Unprocessable(TRIGGER_NOT_CHOSEN)
    name = body.canvas_json.flowName.strip() if body.canvas_name else ""
    if body.konnect_id is None:
        konnect = Konnect(
            owner_id=user.id, status="Draft", canvas_json=canvas, webhook_token=new_token(), konnect_name=name
        )
        session.add(konnect)
    else:
        konnect = _owned(session, user, body.konnect_id)
        konnect.canvas_json = canvas
        if body.canvas_name:
            konnect.konnect_name = name
    session.flush()
    return konnect


def _reply(settings: Settings, konnect: Konnect, message: str) -> SaveKonnectOut:
    return SaveKonnectOut(
        status="SUCCESS",
        message=message,
        konnect_id=konnect.id,
        konnect_status=konnect.status,
        webhook_url=webhook_url(settings, konnect),
    )


def display_name(konnect: Konnect) -> str:
    """The flow's name, or its app names joined with dashes when it has none."""
    if konnect.konnect_name:
        return konnect.konnect_name
    left, right = app_names(konnect.canvas_json)
    return "-".join(n for n in [left or "", *right] if n)


async def _publish(konnect: Konnect, user: User, session: SessionDep, settings: Settings, deployer: Deployer) -> Any:
    try:
        spec = compile_flow(
            konnect.canvas_json,
            konnect_id=konnect.id,
            owner_id=user.id,
            name=display_name(konnect),
            webhook_token=konnect.webhook_token,
        )
    except CompileError as exc:
        # The draft is kept: the user fixes the node the message names and publishes again.
        return JSONResponse({"message": str(exc), "konnect_id": konnect.id}, status_code=422)
    try:
        await deployer.publish(spec)
    except DeployError as exc:
        raise DeployUnavailable(
            f"The konnect was saved but could not be published: {exc}", konnect_id=konnect.id
        ) from exc
    konnect.status = "Published"
    konnect.published_spec = spec.model_dump(mode="json")
    konnect.published_at = datetime.now(UTC)
    session.commit()
    return _reply(settings, konnect, "Konnect published successfully")


@router.post(
    "/save_konnect",
    response_model=SaveKonnectOut,
    responses={422: {"model": Message}, 503: {"model": Message}},
)
async def save_konnect(
    body: SaveKonnectIn, user: CurrentUser, session: SessionDep, settings: SettingsDep, deployer: DeployerDep
) -> Any:
    """Save as draft; with ``publish: true`` this is the same as publish_konnect."""
    konnect = _store_draft(session, user, body)
    session.commit()
    if body.publish:
        return await _publish(konnect, user, session, settings, deployer)
    if konnect.status == "Published":  # the spec: Save keeps the flow as Draft
        await _unpublish(konnect, deployer)
        konnect.status = "Draft"
        konnect.published_spec = None
        session.commit()
    return _reply(settings, konnect, "Konnect saved as draft")


async def _unpublish(konnect: Konnect, deployer: Deployer) -> None:
    try:
        await deployer.unpublish(konnect.id)
    except DeployError as exc:
        raise DeployUnavailable(f"Could not stop the konnect: {exc}") from exc


@router.post(
    "/publish_konnect",
    response_model=SaveKonnectOut,
    responses={422: {"model": Message}, 503: {"model": Message}},
)
async def publish_konnect(
    body: SaveKonnectIn, user: CurrentUser, session: SessionDep, settings: SettingsDep, deployer: DeployerDep
) -> Any:
    """Save the canvas and publish it: save_konnect with ``publish: true``."""
    return await save_konnect(body.model_copy(update={"publish": True}), user, session, settings, deployer)


@router.post(
    "/{konnect_id}/update_status",
    response_model=UpdateStatusOut,
    responses={404: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
    summary="Publish, withdraw (Draft) or delete (DELETED) a flow",
    description="`Published` compiles the flow and hands it to the runners; `Draft` withdraws it from the "
    "runners; `DELETED` withdraws it and hides it from every list (the SPA's delete). On success `message` "
    "is `SUCCESS` and `details` says what happened; a flow the deployer cannot withdraw stays as it was (503).",
)
async def update_status(
    konnect_id: IdPath,
    body: UpdateStatusIn,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    deployer: DeployerDep,
) -> Any:
    konnect = _owned(session, user, konnect_id)
    if body.status == "Published":
        result = await _publish(konnect, user, session, settings, deployer)
        if not isinstance(result, SaveKonnectOut):
            return result
        details = "Flow published"
    else:
        was_published = konnect.status == "Published"
        if was_published:
            await _unpublish(konnect, deployer)
        konnect.status = body.status
        konnect.published_spec = None
        session.commit()
        withdrawn = "withdrawn from the runners and " if was_published else ""
        details = f"Flow {withdrawn}deleted" if body.status == DELETED else f"Flow {withdrawn}saved as draft"
    return UpdateStatusOut(
        status="SUCCESS", message="SUCCESS", details=details, konnect_id=konnect.id, konnect_status=konnect.status
    )
