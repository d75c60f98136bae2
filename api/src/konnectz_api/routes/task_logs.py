"""Task logs (one per run of a konnect, with its steps as tasks) and the flow-history list."""

from __future__ import annotations

import inspect
from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.responses import JSONResponse, Response

from konnectz_api.core.config import Settings
from konnectz_api.crud import reads
from konnectz_api.crud import task_logs as crud
from konnectz_api.crud import task_payloads as payloads
from konnectz_api.crud.task_payloads import is_stub
from konnectz_api.db import run_db
from konnectz_api.deps import BusDep, CurrentUser, Reader, SessionDep, SettingsDep
from konnectz_api.errors import Conflict, NotFound, Unprocessable
from konnectz_api.models import User
from konnectz_api.params import MAX_ID, IdPath, PageIndex, PageSize, SearchText
from konnectz_api.replies import json_reply
from konnectz_api.routes.konnects import item_dicts
from konnectz_api.schemas import KonnectList, Message, ReplayOut, StepApp, TaskList, TaskLogList, TaskOut
from konnectz_api.services.replay import replay_run, replay_run_id
from konnectz_api.task_status import ERROR_STATUSES, TaskLogStatus

router = APIRouter(prefix="/api/v1/task_logs", tags=["task logs"])

HISTORY_PAGE_SIZE = 30
#: SUCCESS, FILTERED, IN_DOUBT, REFUSED, CANCELLED select that status; ERROR every failed run (ERROR, IN_DOUBT,
#: REFUSED), as before the finer statuses (konnectz_api.task_status).
LogType = TaskLogStatus
StartDate = Annotated[date | None, Query(description="On or after this day (UTC)")]
EndDate = Annotated[date | None, Query(description="On or before this day (UTC)")]
HistoryStatus = Annotated[
    LogType | None,
    Query(
        description="Only flows with at least one run of this outcome: SUCCESS (every step ran), FILTERED "
        "(stopped by a filter), ERROR (any failed run, IN_DOUBT and REFUSED included), IN_DOUBT, REFUSED "
        "or CANCELLED (a user cancelled it)"
    ),
]
_HISTORY = (
    "Flow history: the signed-in user's flows (newest first) with the number of successful and failed runs. "
    "start_date/end_date filter the flow's creation date."
)


def _check_dates(start_date: date | None, end_date: date | None) -> None:
    if start_date and end_date and start_date > end_date:
        raise Unprocessable("end_date: must not be before start_date")


def _history_route(path: str, name: str, *, searched: bool, summary: str, description: str) -> None:
    """Declare the flow-history GET at ``path``; only the searched one takes ``search_query``.

    Each route keeps plain query parameters (FastReads plans them, konnectz_api.fastreads).
    """

    async def endpoint(
        reader: Reader,
        settings: SettingsDep,
        search_query: SearchText = None,
        page_size: PageSize = HISTORY_PAGE_SIZE,
        page_index: PageIndex = 1,
        start_date: StartDate = None,
        end_date: EndDate = None,
        status: HistoryStatus = None,
    ) -> Response:
        _check_dates(start_date, end_date)
        page = await reader.run(
            reads.konnect_page,
            page_size=page_size,
            page_index=page_index,
            search=search_query,
            start_date=start_date,
            end_date=end_date,
            log_status=status,
        )
        return json_reply({"konnects": item_dicts(page.rows, settings), "total_konnects": page.total})

    if not searched:
        signature = inspect.signature(endpoint)
        endpoint.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[p for p in signature.parameters.values() if p.name != "search_query"]
        )
    endpoint.__name__ = name
    router.add_api_route(
        path, endpoint, methods=["GET"], response_model=KonnectList, summary=summary, description=description
    )


_history_route("/konnects", "history", searched=False, summary="Flow history", description=_HISTORY)
_history_route(
    "/search_konnects",
    "search_history",
    searched=True,
    summary="Flow history, searched by name",
    description=_HISTORY + " search_query matches anywhere in the name (from 2 characters).",
)


@router.get(
    "/logs",
    response_model=TaskLogList,
    responses={404: {"model": Message, "description": "konnect_id is not one of the user's flows"}},
    summary="Runs of the signed-in user's flows, newest first",
)
async def task_logs(
    reader: Reader,
    konnect_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    task_log_type: Annotated[
        LogType | None,
        Query(description="SUCCESS, FILTERED, IN_DOUBT, REFUSED, CANCELLED; ERROR: every failed run"),
    ] = None,
    start_date: StartDate = None,
    end_date: EndDate = None,
    page_index: PageIndex = 1,
    page_size: PageSize = 60,
) -> Response:
    _check_dates(start_date, end_date)
    page = await reader.run(
        reads.task_log_page,
        page_size=page_size,
        page_index=page_index,
        konnect_id=konnect_id,
        log_type=task_log_type,
        start_date=start_date,
        end_date=end_date,
    )
    # Task logs are stored with their owner, so a page with rows proves the konnect is the user's;
    # an empty page needs the ownership check to tell "no runs" from "not your flow".
    if konnect_id is not None and not page.rows and not await reader.run(reads.konnect_is_live, konnect_id=konnect_id):
        raise NotFound(f"Konnect {konnect_id} not found")
    datas = [r[4] for r in page.rows]
    if any(is_stub(d) for d in datas):
        datas = await reader.run(reads.restore_log_data, rows=page.rows)
    return json_reply(
        {
            "task_logs": [
                {
                    "id": r[0],
                    "konnect_id": r[1],
                    "status": r[2],
                    "task_date": r[3],
                    "data": data,
                    "run_id": r[5],
                    "attempts": r[6],
                    "replay_of": r[7],
                    "replayed_as": r[8],
                    "revision": r[9],
                    "cancelled_by": r[10],
                    "called_by": r[11],
                    "calls": r[12] or [],
                }
                for r, data in zip(page.rows, datas, strict=True)
            ],
            "total": page.total,
        }
    )


@router.get(
    "/{task_log_id}/tasks",
    response_model=TaskList,
    responses={404: {"model": Message}},
    summary="The steps of one run",
)
def tasks(task_log_id: IdPath, user: CurrentUser, session: SessionDep) -> TaskList:
    log = crud.get_owned(session, owner_id=user.id, task_log_id=task_log_id)
    if log is None:
        raise NotFound(f"Task log {task_log_id} not found")
    steps = crud.tasks_of(session, task_log=log)
    datas = payloads.restore(session, [(log.id, t.position, t.data) for t in steps])
    nodes = crud.node_apps(session, task_log=log)
    missing = crud.NodeApp(name="", app_id=None, provider="", trigger=False)
    step_ids = {t.step_id for t in steps}
    # The trigger: the canvas's trigger node, else the run's data entry that is no step.
    trigger_id = next((k for k, n in nodes.items() if n.trigger), None) or next(
        (k for k in log.data if k not in step_ids), None
    )
    trigger = None
    if trigger_id is not None:
        node = nodes.get(trigger_id, missing)
        trigger = StepApp(
            step_id=trigger_id, app_name=node.name or "Trigger", app_id=node.app_id, provider=node.provider
        )
    return TaskList(
        tasks=[
            TaskOut(
                id=t.id,
                task_date=t.task_date,
                step_id=t.step_id,
                app_name=t.app_name,
                status=t.status,
                data=data,
                started_at=t.started_at,
                duration_ms=_duration_ms(t.started_at, t.task_date),
                app_id=nodes.get(t.step_id, missing).app_id,
                provider=nodes.get(t.step_id, missing).provider,
            )
            for t, data in zip(steps, datas, strict=True)
        ],
        trigger=trigger,
    )


def _duration_ms(started: datetime | None, ended: datetime) -> int | None:
    if started is None:
        return None
    return max(0, round((ended - started).total_seconds() * 1000))


_REPLAY = (
    "Run a failed run again: the request it was started with (kept in its task log) is stored as one new "
    "run of the same flow, with a new run_id, and its task log links back (`replay_of`). Only runs that "
    "ended in ERROR, of a flow that is published now, can be replayed; the new run executes the flow as "
    "published now. Answers 202 once the new run is stored (the runner executes it shortly). A request is kept "
    "for `KONNECTZ_REQUEST_RETENTION_DAYS` (30) after its run finished; an older one was deleted and answers 409.\n\n"
    "**Once**: a run that was replayed already answers 200 with the first replay's `run_id`, "
    "`already_replayed: true` and the header `Idempotent-Replayed: true`, and starts nothing; a run that is "
    "itself a replay answers 409 with its `run_id` and `replay_of`. `again=true` asks for a new run explicitly "
    "in both cases. Replays asked for at the same time store one run (its id is derived from the run and "
    "the replay's number)."
)


@router.post(
    "/{task_log_id}/replay",
    response_model=ReplayOut,
    status_code=202,
    responses={
        200: {"model": ReplayOut, "description": "Already replayed: the first replay's run, nothing started"},
        404: {"model": Message},
        409: {
            "model": Message,
            "description": "The run did not fail, is itself a replay (then with run_id and replay_of), its flow "
            "is not published, or its request was deleted",
        },
        503: {"model": Message, "description": "NATS did not store the new run"},
    },
    summary="Replay a failed run (once, unless again=true)",
    description=_REPLAY,
)
async def replay(
    task_log_id: IdPath,
    user: CurrentUser,
    session: SessionDep,
    bus: BusDep,
    settings: SettingsDep,
    again: Annotated[bool, Query(description="Start a new run even if this run was replayed already")] = False,
) -> ReplayOut | JSONResponse:
    found = await run_db(session, _replayable, user, task_log_id, settings, again)
    if isinstance(found, JSONResponse):
        return found
    log, trigger_output = found
    generation = log.replays + 1
    run_id = await replay_run(
        bus,
        konnect_id=log.konnect_id,
        trigger_output=trigger_output,
        replay_of=log.run_id,
        run_id=replay_run_id(log.run_id, generation),
    )
    await run_db(session, crud.record_replay, task_log_id=log.id, run_id=run_id, generation=generation)
    return ReplayOut(message="The run was replayed", run_id=run_id, replay_of=log.run_id)


def _replayable(
    session: SessionDep, user: User, task_log_id: int, settings: Settings, again: bool
) -> tuple[Any, Any] | JSONResponse:
    """The failed run to replay and its request (``run_db``); the earlier replay's reply when it has one."""
    log = crud.get_owned(session, owner_id=user.id, task_log_id=task_log_id)
    if log is None:
        raise NotFound(f"Task log {task_log_id} not found")
    if log.status not in ERROR_STATUSES:
        raise Conflict("Only a failed run can be replayed")
    if log.replayed_as is not None and not again:
        reply = ReplayOut(
            message="This run was replayed already: here is that replay. Ask with again=true for a new run.",
            run_id=log.replayed_as,
            replay_of=log.run_id,
            already_replayed=True,
        )
        return JSONResponse(reply.model_dump(), status_code=200, headers={"Idempotent-Replayed": "true"})
    if log.replay_of is not None and not again:
        raise Conflict(
            f"This run is itself a replay of run {log.replay_of}. Ask with again=true to replay it once more.",
            run_id=log.run_id,
            replay_of=log.replay_of,
        )
    konnect = crud.konnect_of(session, task_log=log)
    if konnect is None or konnect.owner_id != user.id or konnect.status != "Published":
        raise Conflict("Publish the flow again to replay its runs")
    trigger_output = crud.trigger_output_of(session, task_log=log)
    if trigger_output is None:
        raise Conflict(
            "The request of this run was deleted after the retention period "
            f"({settings.request_retention_days} days): it cannot be replayed"
        )
    return log, trigger_output
