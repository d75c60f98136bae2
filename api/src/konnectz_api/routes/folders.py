"""Folders of flows. Every reply carries ``status`` SUCCESS or FAILURE and a ``message`` (the SPA's toasts)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from konnectz_api.crud import folders as crud
from konnectz_api.crud import reads
from konnectz_api.deps import CurrentUser, Reader, SessionDep, SettingsDep
from konnectz_api.errors import NotFound, Unprocessable
from konnectz_api.models import Folder, User
from konnectz_api.params import MAX_ID, IdPath, PageIndex, PageSize, SearchText
from konnectz_api.replies import json_reply
from konnectz_api.routes.konnects import item_dicts
from konnectz_api.schemas import (
    AssignIn,
    AssignOut,
    FailureReply,
    FolderList,
    FolderNameIn,
    FolderOut,
    FolderRemoveOut,
    FolderReply,
    KonnectList,
)

router = APIRouter(prefix="/api/v1/folders", tags=["folders"])
MAX_ASSIGN = 1000
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": FailureReply, "description": "no such folder (or flow) of the signed-in user"}
}


def _folder(session: SessionDep, user: User, folder_id: int) -> Folder:
    folder = crud.get_owned(session, owner_id=user.id, folder_id=folder_id)
    if folder is None:
        raise NotFound("This folder does'nt exist.", status="FAILURE")
    return folder


@router.get("/list", response_model=FolderList, summary="The signed-in user's folders")
async def list_folders(reader: Reader) -> Response:
    rows = await reader.run(reads.folders_with_counts)
    return json_reply(
        {
            "status": "SUCCESS",
            "message": "SUCCESS",
            "folders": [{"id": i, "name": name, "konnect_count": n} for i, name, n in rows],
        }
    )


@router.get(
    "/{folder_id}/konnects", response_model=KonnectList, responses=_NOT_FOUND, summary="The flows of one folder"
)
async def folder_konnects(
    folder_id: IdPath,
    reader: Reader,
    settings: SettingsDep,
    page_size: PageSize = 20,
    page_index: PageIndex = 1,
    search_query: SearchText = None,
) -> Response:
    if not await reader.run(reads.folder_is_owned, folder_id=folder_id):
        raise NotFound("This folder does'nt exist.", status="FAILURE")
    page = await reader.run(
        reads.konnect_page, page_size=page_size, page_index=page_index, search=search_query, folder=folder_id
    )
    return json_reply({"konnects": item_dicts(page.rows, settings), "total_konnects": page.total})


@router.post("/add", response_model=FolderReply, summary="Create a folder")
def add_folder(body: FolderNameIn, user: CurrentUser, session: SessionDep) -> FolderReply:
    folder = crud.create(session, owner_id=user.id, name=body.folder_name)
    return FolderReply(
        status="SUCCESS",
        message="Folder created successfully",
        folder=FolderOut(id=folder.id, name=folder.name, konnect_count=0),
    )


@router.put("/{folder_id}/rename", response_model=FolderReply, responses=_NOT_FOUND, summary="Rename a folder")
def rename_folder(folder_id: IdPath, body: FolderNameIn, user: CurrentUser, session: SessionDep) -> FolderReply:
    folder = _folder(session, user, folder_id)
    changed = crud.rename(session, folder=folder, name=body.folder_name)
    count = crud.count_konnects(session, owner_id=user.id, folder_id=folder.id)
    return FolderReply(
        status="SUCCESS",
        message="Folder renamed successfully" if changed else "Folder name unchanged",
        folder=FolderOut(id=folder.id, name=folder.name, konnect_count=count),
    )


@router.get(
    "/{folder_id}/remove",
    response_model=FolderRemoveOut,
    responses=_NOT_FOUND,
    summary="Remove a folder; its flows return to Home",
    description="The flows of the folder are not deleted: they return to Home (no folder). "
    "The reply says how many moved.",
)
def remove_folder(folder_id: IdPath, user: CurrentUser, session: SessionDep) -> FolderRemoveOut:
    folder = _folder(session, user, folder_id)
    moved = crud.remove(session, folder=folder)
    noun = "flow" if moved == 1 else "flows"
    return FolderRemoveOut(
        status="SUCCESS",
        message=f"Folder removed successfully; its {moved} {noun} moved to Home",
        folder_id=folder_id,
        konnects_moved_home=moved,
    )


def parse_ids(text: str) -> list[int]:
    ids = [int(part) for part in text.split(",")]
    if len(ids) > MAX_ASSIGN:
        raise Unprocessable(f"konnects: at most {MAX_ASSIGN} ids at once", status="FAILURE")
    if any(i < 1 or i > MAX_ID for i in ids):
        raise Unprocessable("konnects: every id must be a positive 64-bit integer", status="FAILURE")
    return ids


@router.post(
    "/{folder_id}/assign",
    response_model=AssignOut,
    responses={**_NOT_FOUND, 422: {"model": FailureReply, "description": "malformed id list"}},
    summary="Move flows into a folder (all or none)",
    description="`konnects` is a comma-separated list of flow ids. When any id is not one of the "
    "signed-in user's flows, nothing is moved and the reply is 404.",
)
def assign_konnects(folder_id: IdPath, body: AssignIn, user: CurrentUser, session: SessionDep) -> AssignOut:
    folder = _folder(session, user, folder_id)
    ids = parse_ids(body.konnects)
    try:
        moved = crud.assign(session, owner_id=user.id, folder=folder, konnect_ids=ids)
    except crud.NotOwned as exc:
        shown = ", ".join(str(i) for i in exc.missing[:10])
        raise NotFound(f"Konnect not found: {shown}; no flow was moved", status="FAILURE") from exc
    noun = "Flow" if len(moved) == 1 else "Flows"
    return AssignOut(status="SUCCESS", message=f"{noun} moved successfully", folder_id=folder.id, konnects=moved)
