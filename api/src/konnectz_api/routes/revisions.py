"""Revisions of a flow: every publish kept unchanged; list them, read one, restore one.

Scoped like the other flow routes: the account's own flows (a team member reads at any level and
restores with Create). Restoring publishes the old revision's canvas again as a NEW revision
(``restored_from``); the revisions before it stay as they were.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

from fastapi import APIRouter, Path
from sqlalchemy.orm import Session

from konnectz_api import step_secrets
from konnectz_api.crud import revisions as crud
from konnectz_api.db import run_db
from konnectz_api.deps import CurrentClaims, CurrentUser, DeployerDep, SessionDep, SettingsDep
from konnectz_api.errors import Conflict, NotFound
from konnectz_api.models import Konnect, KonnectRevision, User
from konnectz_api.params import IdPath, PageIndex, PageSize
from konnectz_api.routes.konnects import owned_konnect, publish_flow
from konnectz_api.schemas import (
    Message,
    RestoreIn,
    RevisionDetail,
    RevisionItem,
    RevisionList,
    SaveKonnectOut,
)

router = APIRouter(prefix="/api/v1/konnects", tags=["revisions"])

MAX_REVISION = 2**31 - 1
RevisionNumber = Annotated[int, Path(ge=1, le=MAX_REVISION, description="The revision's number (1, 2, 3...)")]


def _item(revision: KonnectRevision, live: int | None) -> dict[str, Any]:
    return {
        "number": revision.number,
        "message": revision.message,
        "published_by": revision.published_by,
        "published_by_email": revision.published_by_email,
        "created_at": revision.created_at,
        "restored_from": revision.restored_from,
        "live": live is not None and revision.number == live,
    }


def _public_spec(value: Any) -> Any:
    """The flow spec as replies show it: no sealed secret values, no webhook token."""
    if isinstance(value, dict):
        return {k: _public_spec(v) for k, v in value.items() if k not in ("sealed", "token")}
    if isinstance(value, list):
        return [_public_spec(v) for v in value]
    return value


def _live(konnect: Any) -> int | None:
    return konnect.live_revision if konnect.status == "Published" else None


def _owned_revision(session: Session, user: User, konnect_id: int, number: int) -> tuple[Konnect, KonnectRevision]:
    """The account's flow and its revision ``number`` (404 when either is not there)."""
    konnect = owned_konnect(session, user, konnect_id)
    revision = crud.get(session, owner_id=user.id, konnect_id=konnect.id, number=number)
    if revision is None:
        raise NotFound(f"Revision {number} of konnect {konnect_id} not found")
    return konnect, revision


@router.get(
    "/{konnect_id}/revisions",
    response_model=RevisionList,
    summary="The revisions of a flow, newest first",
    description="Every publish of the flow is kept as a revision: its number, message, who published it and "
    "when, whether a restore made it (`restored_from`) and whether it is the one running (`live`).",
)
def list_revisions(
    konnect_id: IdPath,
    user: CurrentUser,
    session: SessionDep,
    page_size: PageSize = 20,
    page_index: PageIndex = 1,
) -> RevisionList:
    konnect = owned_konnect(session, user, konnect_id)
    page = crud.page(session, owner_id=user.id, konnect_id=konnect.id, page_size=page_size, page_index=page_index)
    live = _live(konnect)
    return RevisionList(
        revisions=[RevisionItem(**_item(r, live)) for r in page.rows], total=page.total, live_revision=live
    )


@router.get(
    "/{konnect_id}/revisions/{number}",
    response_model=RevisionDetail,
    summary="One revision of a flow: its canvas and its compiled spec",
)
def get_revision(konnect_id: IdPath, number: RevisionNumber, user: CurrentUser, session: SessionDep) -> RevisionDetail:
    konnect, revision = _owned_revision(session, user, konnect_id, number)
    return RevisionDetail(
        **_item(revision, _live(konnect)),
        canvas_json=step_secrets.mask_canvas(revision.canvas_json),
        spec=_public_spec(revision.spec),
    )


@router.post(
    "/{konnect_id}/revisions/{number}/restore",
    response_model=SaveKonnectOut,
    responses={409: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
    summary="Publish an earlier revision again, as a new revision",
    description="The revision's canvas becomes the flow's draft (unsaved or pending changes are replaced) and "
    "is published as a new revision with `restored_from` = `number`; the earlier revisions are kept. 409: the "
    "revision is already the live one (and no changes are pending). 422: it no longer compiles (a node names "
    "what to fix; the draft is kept as it was).",
)
async def restore_revision(
    konnect_id: IdPath,
    number: RevisionNumber,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    deployer: DeployerDep,
    signed_in: CurrentClaims,
    body: RestoreIn | None = None,
) -> Any:
    konnect, revision = await run_db(session, _owned_revision, user, konnect_id, number)
    if konnect.status == "Published" and konnect.live_revision == number and not konnect.draft_pending:
        raise Conflict(f"Revision {number} is already live: there is nothing to restore.", konnect_id=konnect.id)

    def restore_draft(_: Session) -> None:  # in publish's compiling transaction: kept only if it compiles
        konnect.canvas_json = copy.deepcopy(revision.canvas_json)
        name = str((revision.canvas_json or {}).get("flowName") or "").strip()
        if name:
            konnect.konnect_name = name[:255]

    message = (body.message if body is not None else None) or f"Restored revision {number}"
    result = await publish_flow(
        konnect,
        user,
        session,
        settings,
        deployer,
        actor=signed_in[0],
        message=message,
        restored_from=number,
        prepare=restore_draft,
    )
    result.message = f"Revision {number} restored and published as revision {result.revision}"
    return result
