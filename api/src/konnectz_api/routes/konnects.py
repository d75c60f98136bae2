"""Konnects (flows): list, load for editing, test a node, save as draft, publish, change status."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from konnectz_api import step_secrets
from konnectz_api.compile.live_trigger import live_trigger
from konnectz_api.compile.plan import TRIGGER_NOT_CHOSEN, find_trigger, konnect_app_names
from konnectz_api.core.config import Settings
from konnectz_api.crud import activities, members, reads
from konnectz_api.crud import konnects as konnect_crud
from konnectz_api.crud import task_logs as task_log_crud
from konnectz_api.db import run_db
from konnectz_api.deps import (
    AccountAt,
    BusDep,
    CurrentClaims,
    CurrentUser,
    DeployerDep,
    Reader,
    SessionDep,
    SettingsDep,
    SignedInUser,
)
from konnectz_api.errors import VALIDATION_EXTRAS, Conflict, NotFound, Unprocessable
from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import Konnect, User
from konnectz_api.params import MAX_ID, IdPath, PageIndex, PageSize, SearchText
from konnectz_api.replies import json_reply
from konnectz_api.schemas import (
    ActiveRunList,
    ActiveRunOut,
    CallableFlowList,
    CallableFlowOut,
    CancelRunOut,
    DeleteActivityIn,
    DeleteActivityOut,
    KonnectEdit,
    KonnectList,
    Message,
    SaveKonnectIn,
    SaveKonnectOut,
    SecretNames,
    TestAndReviewIn,
    TestAndReviewOut,
    TestRefusedOut,
    UpdateStatusIn,
    UpdateStatusOut,
)
from konnectz_api.services import app_webhooks, flow_calls, publishing, rate_budgets, review, run_control
from konnectz_api.services.credential_broker import cipher
from konnectz_api.services.deployer import Deployer, DeployError, LocalDeployer
from konnectz_api.services.publishing import DeployUnavailable

router = APIRouter(prefix="/api/v1/konnects", tags=["konnects"])
# The editor sends ``POST api/v1//konnects/delete_activity`` (canvas spec §7): served as written.
activity_router = APIRouter(tags=["konnects"])
DELETED = konnect_crud.DELETED
TRIGGER_WITH_ACTIONS = "Cannot delete Trigger while Action present."


webhook_url = review.webhook_url


def _owned(session: SessionDep, user: User, konnect_id: int) -> Konnect:
    if not 1 <= konnect_id <= MAX_ID:
        raise NotFound(f"Konnect {konnect_id} not found")
    return review.owned_konnect(session, user, konnect_id)


def item_dicts(rows: list[tuple[Any, ...]], settings: Settings) -> list[dict[str, Any]]:
    """The ``KonnectItem`` replies of :func:`konnectz_api.crud.reads.konnect_page` rows, as plain dicts."""
    base = settings.webhook_base_url.rstrip("/")
    items = []
    for kid, name, status, created_at, folder_id, token, names, canvas, ok, err, filtered, pending, live in rows:
        if names is None:
            names = konnect_app_names(canvas)
        left, right = names["left"], names["right"]
        kind, schedule = live_trigger(live)
        items.append(
            {
                "id": kid,
                "konnect_name": name,
                "status": status,
                "created_at": created_at,
                "success_task_count": ok,
                "error_task_count": err,
                "filtered_task_count": filtered,
                "left_app": {"name": left} if left else None,
                "right_apps": [{"app_name": n} for n in right],
                "webhook_url": f"{base}/hooks/{token}",
                "trigger_kind": kind,
                "schedule": schedule,
                "draft_pending": bool(pending),
                "folder_id": folder_id,
                "phase": None,
            }
        )
    return items


async def read_folder_filter(reader: Reader, folder: str | None) -> konnect_crud.FolderFilter:
    """``home`` or a folder id of the account (404 otherwise); ``None`` for every folder."""
    if folder is None or folder == konnect_crud.HOME:
        return folder if folder is None else konnect_crud.HOME
    folder_id = int(folder)
    if not 1 <= folder_id <= MAX_ID or not await reader.run(reads.folder_is_owned, folder_id=folder_id):
        raise NotFound("This folder does'nt exist.", status="FAILURE")
    return folder_id


@router.get(
    "",
    response_model=KonnectList,
    responses={404: {"model": Message, "description": "unknown folder"}},
    summary="The signed-in user's flows, newest first",
)
async def list_konnects(
    reader: Reader,
    settings: SettingsDep,
    deployer: DeployerDep,
    page_size: PageSize = 20,
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
) -> Response:
    page = await reader.run(
        reads.konnect_page,
        page_size=page_size,
        page_index=page_index,
        search=search_query,
        start_date=start_date,
        end_date=end_date,
        status=status,
        folder=await read_folder_filter(reader, folder),
    )
    items = item_dicts(page.rows, settings)
    published = [k["id"] for k in items if k["status"] == "Published"]
    if published and not isinstance(deployer, LocalDeployer):  # Kubernetes: a blocking API call
        phases = await run_in_threadpool(deployer.phases, reader.owner_id, published)
        for item in items:
            item["phase"] = phases.get(item["id"])
    return json_reply({"konnects": items, "total_konnects": page.total})


@router.get("/{konnect_id}/edit", response_model=KonnectEdit)
def edit_konnect(konnect_id: IdPath, user: CurrentUser, session: SessionDep, settings: SettingsDep) -> KonnectEdit:
    k = _owned(session, user, konnect_id)
    return KonnectEdit(
        konnect_id=k.id,
        konnect_name=k.konnect_name,
        status=k.status,
        draft_pending=k.status == "Published" and k.draft_pending,
        canvas_json=step_secrets.mask_canvas(k.canvas_json),
        webhook_url=webhook_url(settings, k),
    )


@router.get(
    "/secret_names",
    response_model=SecretNames,
    summary="The header and parameter names whose values are secret by default, and the mask",
    description="A step's header or query-parameter row marked `secret` is stored encrypted; every reply "
    "shows its value as `mask`, and sending `mask` back keeps the stored value. A row whose name, in lower "
    "case, is one of `names` or contains one of `name_parts` is always secret: the api stores it so whatever "
    "`secret` the client sends (the reply's `sealed_by_name` names such rows) and reads it back with "
    "`secret: true`.",
)
def secret_names() -> SecretNames:
    return SecretNames(
        names=list(step_secrets.SECRET_NAMES),
        name_parts=list(step_secrets.SECRET_NAME_PARTS),
        mask=step_secrets.MASK,
    )


@router.get(
    "/callable",
    response_model=CallableFlowList,
    summary="The flows a Call a Flow step can call",
    description="The account's published flows that start with the 'Called by a flow or AI tool' trigger, "
    "with their inputs (docs/sub-flows.md).",
)
def callable_flows(user: CurrentUser, session: SessionDep) -> CallableFlowList:
    flows = flow_calls.callable_flows(session, user.id)
    return CallableFlowList(flows=[CallableFlowOut(**flow) for flow in flows])


def _store_draft(session: SessionDep, user: User, body: SaveKonnectIn, settings: Settings) -> tuple[Konnect, list[str]]:
    """Saving needs a chosen trigger tested with Test & Review (which created the konnect_id). Also
    answers the rows stored as secret by name only (:func:`konnectz_api.step_secrets.sealed_by_name`)."""
    canvas = jsonb_safe(body.canvas_json.model_dump(mode="json"))
    trigger = find_trigger(canvas)
    if trigger is None or body.konnect_id is None:
        raise Unprocessable(TRIGGER_NOT_CHOSEN)
    konnect = _owned(session, user, body.konnect_id)
    tested = activities.get_activity(session, owner_id=user.id, konnect_id=konnect.id, node_id=str(trigger.get("id")))
    if tested is None or tested.status != activities.SUCCESS:
        raise Unprocessable(TRIGGER_NOT_CHOSEN)
    konnect.canvas_json = step_secrets.seal_canvas(
        canvas, konnect.canvas_json, cipher=cipher(settings), konnect_id=konnect.id
    )
    if body.canvas_name:
        konnect.konnect_name = str(canvas.get("flowName") or "").strip()
    session.flush()
    return konnect, step_secrets.sealed_by_name(canvas)


#: Save on a live flow: what the user is told (the flow stays live).
PENDING_SAVED = (
    "Changes saved as a draft beside the live version: the live flow keeps running. Publish to make them live."
)


def _reply(settings: Settings, konnect: Konnect, message: str) -> SaveKonnectOut:
    return SaveKonnectOut(
        status="SUCCESS",
        message=message,
        konnect_id=konnect.id,
        konnect_status=konnect.status,
        webhook_url=webhook_url(settings, konnect),
        draft_pending=konnect.status == "Published" and konnect.draft_pending,
    )


async def _publish(
    konnect: Konnect,
    user: User,
    session: Session,
    settings: Settings,
    deployer: Deployer,
    *,
    actor: User | None = None,
    message: str | None = None,
    restored_from: int | None = None,
    prepare: Callable[[Session], None] | None = None,
) -> SaveKonnectOut:
    """:func:`konnectz_api.services.publishing.publish` and its reply (its errors are the route's 409,
    422 and 503)."""
    revision = await publishing.publish(
        konnect,
        user,
        session,
        settings,
        deployer,
        actor=actor,
        message=message,
        restored_from=restored_from,
        prepare=prepare,
    )
    reply = _reply(settings, konnect, "Konnect published successfully")
    reply.revision = revision
    return reply


@router.post(
    "/save_konnect",
    response_model=SaveKonnectOut,
    # 404: the body's konnect_id does not exist or is not yours.
    responses={404: {"model": Message}, 409: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
)
async def save_konnect(
    body: SaveKonnectIn,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    deployer: DeployerDep,
    signed_in: CurrentClaims,
) -> Any:
    """Save as draft; with ``publish: true`` this is the same as publish_konnect.

    Saving a Published flow keeps it live: the changes are stored beside the live version
    (``draft_pending``), which keeps running until Publish (a publish that fails keeps them pending
    too). Taking a flow offline is only ``update_status`` Draft. Each publish is kept as a new revision
    (``message`` goes with it; the reply's ``revision`` is its number)."""
    konnect, by_name = await run_db(session, _saved_draft, user, body, settings)
    if body.publish:
        result = await _publish(konnect, user, session, settings, deployer, actor=signed_in[0], message=body.message)
    else:
        result = _reply(settings, konnect, PENDING_SAVED if konnect.status == "Published" else "Konnect saved as draft")
    result.sealed_by_name = by_name
    return result


def _saved_draft(session: Session, user: User, body: SaveKonnectIn, settings: Settings) -> tuple[Konnect, list[str]]:
    konnect, by_name = _store_draft(session, user, body, settings)
    if konnect.status == "Published":
        konnect.draft_pending = True
    return konnect, by_name


async def _unpublish(konnect: Konnect, deployer: Deployer, session: SessionDep, settings: Settings) -> None:
    try:
        await deployer.unpublish(konnect.id)
    except DeployError as exc:
        raise DeployUnavailable(f"Could not stop the konnect: {exc}") from exc
    await app_webhooks.unsubscribe(session, settings, konnect)


@router.post(
    "/publish_konnect",
    response_model=SaveKonnectOut,
    responses={404: {"model": Message}, 409: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
)
async def publish_konnect(
    body: SaveKonnectIn,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    deployer: DeployerDep,
    signed_in: CurrentClaims,
) -> Any:
    """Save the canvas and publish it: save_konnect with ``publish: true``. A catalogue app's webhook
    trigger is subscribed at the app first (through the account); a subscription the app refuses
    answers 422 with its reason and nothing is published."""
    return await save_konnect(body.model_copy(update={"publish": True}), user, session, settings, deployer, signed_in)


#: A team member's level for a status change is read from the parsed body: DELETED needs Create/Delete.
_STATUS_ACCESS = AccountAt(UpdateStatusIn, lambda b: members.status_level(b.status), lambda b: f"status={b.status}")


@router.post(
    "/{konnect_id}/update_status",
    response_model=UpdateStatusOut,
    responses={404: {"model": Message}, 409: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
    summary="Publish, withdraw (Draft) or delete (DELETED) a flow",
    description="`Published` compiles the flow and hands it to the runners; `Draft` withdraws it from the "
    "runners (the only way to take a live flow offline: saving a live flow keeps it live); "
    "`DELETED` withdraws it and hides it from every list (the SPA's delete). On success `message` "
    "is `SUCCESS` and `details` says what happened; a flow the deployer cannot withdraw stays as it was (503).",
)
async def update_status(
    konnect_id: IdPath,
    body: UpdateStatusIn,
    user: Annotated[User, Depends(_STATUS_ACCESS)],
    session: SessionDep,
    settings: SettingsDep,
    deployer: DeployerDep,
    signed_in: CurrentClaims,
) -> Any:
    konnect = await run_db(session, _owned, user, konnect_id)
    if body.status == "Published":
        await _publish(konnect, user, session, settings, deployer, actor=signed_in[0])
        details = "Flow published"
    else:
        was_published = konnect.status == "Published"
        if was_published:
            await _unpublish(konnect, deployer, session, settings)
        await run_db(session, _withdrawn, konnect, body.status)
        withdrawn = "withdrawn from the runners and " if was_published else ""
        details = f"Flow {withdrawn}deleted" if body.status == DELETED else f"Flow {withdrawn}saved as draft"
    return UpdateStatusOut(
        status="SUCCESS", message="SUCCESS", details=details, konnect_id=konnect.id, konnect_status=konnect.status
    )


def _withdrawn(session: Session, konnect: Konnect, status: str) -> None:
    konnect.status = status
    konnect.published_spec = None
    konnect.draft_pending = False
    konnect.live_revision = None


# An invalid body is a refused test too: its 422 carries test_status Error like the route's own.
VALIDATION_EXTRAS["/api/v1/konnects/test_and_review"] = lambda message: {
    "test_status": "Error",
    "display_message": message,
}


@router.post(
    "/test_and_review",
    response_model=TestAndReviewOut,
    responses={404: {"model": Message}, 422: {"model": TestRefusedOut}},
)
async def test_and_review(
    body: TestAndReviewIn, user: CurrentUser, session: SessionDep, settings: SettingsDep, bus: BusDep
) -> Any:
    """Test one node with the runner's step code. The trigger's test creates the konnect (a draft)
    when ``konnect_id`` is null and answers its webhook URL; a catalogue app's polling trigger answers
    the newest item of the live app, read through the chosen account (or the manifest's sample when
    there is none), an app webhook trigger the manifest's sample; an action's test uses the outputs of
    the upstream nodes' tests. A node that cannot be tested answers 422 with ``test_status``
    Error and the message to show; a step that ran and failed answers 200 with ``test_status`` Error.

    The trigger's test honours the editor's test drawer in ``trigger_filter``: ``labels`` are keys of
    the trigger's data (as its last test answered them; dotted for nested values) and ``join`` says
    whether the sample must have a value for every one of them (``AND``, the default) or for at
    least one (``OR``); "a value" is the Filter's *Is Exist* (present, not null, not empty text).
    The first qualifying sample is answered; when none qualifies the test is refused (422) and the
    node's earlier result is kept. Without labels any sample is accepted. A Webhook trigger with no
    captured request yet has no sample, so the choice applies from its first capture on.

    A request with an app account takes a token from the account's rate budget, shared with the
    runners; a test that waited for one says so in its message."""
    return await review.run_test(session, settings, user, body, rate_budgets.shared_budgets(bus))


def _delete_activity(body: DeleteActivityIn, user: User, session: SessionDep, settings: Settings) -> DeleteActivityOut:
    konnect = _owned(session, user, body.konnect_id)
    if body.konnect_activity_id is None and body.nodeId is None:
        raise Unprocessable("konnect_activity_id or nodeId is required")
    canvas = jsonb_safe(body.canvas_json.model_dump(mode="json")) if body.canvas_json is not None else None
    trigger = find_trigger(canvas if canvas is not None else konnect.canvas_json)
    if trigger is not None and body.nodeId is not None and str(trigger.get("id")) == body.nodeId:
        others = (canvas or konnect.canvas_json).get("apps") or []
        if len(others) > 1:
            raise Conflict(TRIGGER_WITH_ACTIONS)
    deleted = activities.delete_activity(
        session,
        owner_id=user.id,
        konnect_id=konnect.id,
        activity_id=body.konnect_activity_id,
        node_id=body.nodeId,
    )
    by_name: list[str] = []
    if canvas is not None:
        konnect.canvas_json = step_secrets.seal_canvas(
            canvas, konnect.canvas_json, cipher=cipher(settings), konnect_id=konnect.id
        )
        by_name = step_secrets.sealed_by_name(canvas)
    session.commit()
    message = "Test result deleted" if deleted else "The node had no test result to delete"
    return DeleteActivityOut(status="SUCCESS", message=message, sealed_by_name=by_name)


@activity_router.post(
    "/api/v1//konnects/delete_activity",
    response_model=DeleteActivityOut,
    responses={404: {"model": Message}, 409: {"model": Message}, 422: {"model": Message}},
)
def delete_activity(
    body: DeleteActivityIn, user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> DeleteActivityOut:
    """Delete a node's test result (when a tested node is deleted on the canvas); ``canvas_json``,
    when sent, replaces the draft's document. The trigger's cannot go while actions exist."""
    return _delete_activity(body, user, session, settings)


@activity_router.post("/api/v1/konnects/delete_activity", response_model=DeleteActivityOut, include_in_schema=False)
def delete_activity_single_slash(
    body: DeleteActivityIn, user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> DeleteActivityOut:
    return _delete_activity(body, user, session, settings)


#: For the revisions' routes (konnectz_api.routes.revisions): the account's flow, and a publish kept as a revision.
owned_konnect = _owned
publish_flow = _publish
# --- run control: active runs, cancel ------------------------------------------------------------
RunIdPath = Annotated[
    str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="The run's id (run_id)")
]


@router.get(
    "/{konnect_id}/runs/active",
    response_model=ActiveRunList,
    responses={404: {"model": Message}, 503: {"model": Message}},
    summary="The flow's runs that have not finished: queued, running, or waiting in a delay",
    description=f"At most {run_control.LIST_LIMIT} runs, the oldest first. A run is listed from the moment a "
    "runner takes it (or queues it for a concurrency slot) until its task log is stored.",
)
async def active_runs(konnect_id: IdPath, user: CurrentUser, session: SessionDep, bus: BusDep) -> ActiveRunList:
    konnect = await run_db(session, _owned, user, konnect_id)
    runs = await run_control.active_runs(bus, owner_id=konnect.owner_id, konnect_id=konnect.id)
    return ActiveRunList(
        runs=[
            ActiveRunOut(
                run_id=r.run_id,
                konnect_id=r.konnect_id,
                status=r.status,
                since=r.since,
                step_id=r.step_id,
                resume_at=r.resume_at,
                waiting_for=r.waiting_for,
                waiting_since=r.waiting_since,
            )
            for r in runs
        ]
    )


@router.post(
    "/{konnect_id}/runs/{run_id}/cancel",
    response_model=CancelRunOut,
    status_code=202,
    responses={
        404: {"model": Message, "description": "No such flow, or no such run of it"},
        409: {"model": Message, "description": "The run has finished already"},
        503: {"model": Message, "description": "NATS did not store the cancel"},
    },
    summary="Cancel a run that has not finished",
    description="A running run stops before its next step (the step it is in finishes); a run waiting in a "
    "delay stops now; a queued run stops without running any step. Its task log then says CANCELLED, with "
    "`cancelled_by` the e-mail of who cancelled it and the steps that ran before. Answers 202 once the "
    "cancel is stored.",
)
async def cancel_run(
    konnect_id: IdPath,
    run_id: RunIdPath,
    user: CurrentUser,
    me: SignedInUser,
    session: SessionDep,
    bus: BusDep,
) -> CancelRunOut:
    konnect = await run_db(session, _owned, user, konnect_id)
    finished = await run_db(
        session, task_log_crud.by_run, owner_id=konnect.owner_id, konnect_id=konnect.id, run_id=run_id
    )
    if finished is not None:
        raise Conflict(f"Run {run_id} has finished already ({finished.status}): there is nothing to cancel")
    entry = await run_control.cancel_run(
        bus, owner_id=konnect.owner_id, konnect_id=konnect.id, run_id=run_id, by=me.email
    )
    if entry is None:
        raise NotFound(f"Run {run_id} is not running, waiting or queued in this flow")
    return CancelRunOut(
        message="The run is being cancelled: it stops before its next step", run_id=run_id, status=entry.status
    )
