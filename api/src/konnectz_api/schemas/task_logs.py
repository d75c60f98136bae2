"""Task logs, their tasks, active runs and replays (``routes/task_logs.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from konnectz_api.task_status import TaskLogStatus
from konnectz_contracts.run_control import ActiveStatus


class CalledBy(BaseModel):
    """Call a flow: the run (and its Call a Flow step) that started this run."""

    konnect_id: int
    konnect_name: str = ""
    run_id: str
    step_id: str


class CalledRun(BaseModel):
    """Call a flow: a run one of this run's Call a Flow steps started."""

    step_id: str
    run_id: str
    flow_id: int | None = None
    flow_name: str = ""


class TaskLogOut(BaseModel):
    id: int
    konnect_id: int
    status: TaskLogStatus = Field(
        description="SUCCESS: every step ran; FILTERED: a filter stopped the run; ERROR: a step failed; "
        "IN_DOUBT: the runner stopped during a step with effects (not run again); REFUSED: refused before any "
        "step (the task quota); CANCELLED: a user cancelled it (cancelled_by). Task logs older than these statuses "
        "hold SUCCESS or ERROR."
    )
    task_date: datetime
    data: dict[str, Any]
    run_id: str = Field(default="", description="The run's id (what the webhook answered with)")
    attempts: int = Field(
        default=1, description="Deliveries of the run to a worker (more than 1 when a runner died or was busy)"
    )
    replay_of: str | None = Field(default=None, description="run_id of the run this one replays")
    replayed_as: str | None = Field(default=None, description="run_id of this run's latest replay")
    # revisions
    revision: int | None = Field(
        default=None, description="The flow's revision the run executed (null: published before revisions)"
    )
    # run control
    cancelled_by: str | None = Field(default=None, description="Who cancelled the run (status CANCELLED): an e-mail")
    # call a flow
    called_by: CalledBy | None = Field(default=None, description="The run of another flow that called this run")
    calls: list[CalledRun] = Field(default_factory=list, description="The runs this run's Call a Flow steps started")


class ActiveRunOut(BaseModel):
    """A run that has not finished (run control)."""

    run_id: str
    konnect_id: int
    status: ActiveStatus = Field(
        description="QUEUED: waits for a concurrency slot; RUNNING: executes step_id; WAITING: in delay step_id "
        "until resume_at"
    )
    since: datetime = Field(description="When the run started (QUEUED: when it was queued)")
    step_id: str | None = None
    resume_at: datetime | None = Field(default=None, description="When a waiting run goes on (a wait: its timeout)")
    waiting_for: str | None = Field(default=None, description="Whom a run in a Wait for a Call waits for")
    waiting_since: datetime | None = Field(default=None, description="Since when it waits (a Wait for a Call)")


class ActiveRunList(BaseModel):
    runs: list[ActiveRunOut]


class CancelRunOut(BaseModel):
    message: str
    run_id: str
    status: ActiveStatus = Field(description="What the run was doing when it was cancelled")


class ReplayOut(BaseModel):
    message: str
    run_id: str = Field(description="The new run's id; its task log has replay_of = the replayed run's run_id")
    replay_of: str
    already_replayed: bool = Field(
        default=False, description="true: the run was replayed before and this is that replay (nothing started)"
    )


class TaskLogList(BaseModel):
    task_logs: list[TaskLogOut]
    total: int


class StepApp(BaseModel):
    """Which app or add-on a step of the flow is, read from the flow's canvas (its current version)."""

    step_id: str
    app_name: str
    app_id: int | None = Field(default=None, description="Catalogue app id (its icon: /api/v1/apps/{app_id}/icon)")
    provider: str = Field(default="", description="The app's key or the add-on (webhook, filter, formatter, ...)")


class TaskOut(BaseModel):
    id: int
    task_date: datetime = Field(description="When the step ended")
    step_id: str
    app_name: str
    status: str
    data: dict[str, Any] = Field(
        description="input, output, error, (a filter that stopped the run, or a skipped path's step) stop, "
        'and (a step on a router path) path: "<router step id>/<path name>"'
    )
    started_at: datetime | None = Field(default=None, description="When the step started (unknown for old tasks)")
    duration_ms: int | None = Field(default=None, description="task_date - started_at in milliseconds")
    app_id: int | None = Field(default=None, description="The step's catalogue app id, when the flow still has it")
    provider: str = Field(default="", description="The step's app key or add-on, when the flow still has it")


class TaskList(BaseModel):
    tasks: list[TaskOut]
    trigger: StepApp | None = Field(default=None, description="The flow's trigger (the run's data holds its output)")
