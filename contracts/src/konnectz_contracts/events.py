"""The wire contract between webhook ingress, runner workers and the api, on NATS JetStream.

- ``KZ_RUNS`` (subjects ``kz.runs.>``): one :class:`RunRequest` per accepted trigger, on
  ``kz.runs.<konnect_id>`` with header ``Nats-Msg-Id = run_id``. A run is deleted from the stream
  within about two seconds of its worker acknowledging it (after its TaskEvent was stored): the worker
  purges its consumer's subjects below the consumer's ack floor once a second while runs finish (one
  request for all of them, not a delete per run; see :mod:`konnectz_runner.work.worker`). The stream
  keeps limits retention, not work-queue: a work-queue stream refuses overlapping consumers, which a
  local runner, a konnect's dedicated runner and a ``tick`` need, and an interest stream would drop the
  timers below (no consumer follows ``kz.timers.>``).
- ``KZ_EVENTS`` (subjects ``kz.events.>``): one :class:`TaskEvent` per finished run, on
  ``kz.events.<konnect_id>`` with header ``Nats-Msg-Id = run_id``. The api stores it as one task
  log and dedupes on ``run_id``, so a redelivered run is harmless. Interest retention: an event is
  deleted once the api's consumer (:data:`EVENTS_CONSUMER`, created with the stream) acknowledged it.

Both streams, and ``KZ_CAPTURES``, have the explicit bounds of :mod:`konnectz_contracts.limits`
(``max_msg_size``, ``max_bytes``, ``max_age``). Creating them and publishing to them is JetStream I/O:
:mod:`konnectz_runner.bus.events` (``ensure_streams``, ``publish_run``, ``publish_event``).
- ``KZ_KONNECTS`` (KV bucket): key ``konnect.<konnect_id>`` holds the published
  :class:`~konnectz_contracts.spec.FlowSpec` as JSON. The LocalDeployer writes it; runners watch it.
- ``KZ_RUNS`` also holds timers (subjects ``kz.timers.>``, the stream allows message schedules):
  JetStream scheduled messages whose body is a RunRequest and whose target is
  ``kz.runs.<konnect_id>`` — a delayed run's continuation, or a local schedule's next fire
  (see :mod:`konnectz_runner.bus.timers`).
- ``KZ_SCHEDULES`` (KV bucket): key ``konnect.<konnect_id>`` holds the last fire a worker started
  for a schedule konnect (``{"fire": ..., "seq": ...}``), so a fire runs once however often it
  is enqueued.
- ``KZ_STEPS`` (KV bucket, entries kept 24 h): each finished step of a run with effects, by
  (run id, step id), so a redelivered run does not repeat them (:mod:`konnectz_runner.engine.journal`).
- ``KZ_IDEMPOTENCY`` (KV bucket, entries kept 24 h): the run started for a webhook's
  ``Idempotency-Key`` (:mod:`konnectz_runner.ingress.idempotency`).
- ``KZ_POLLS`` (KV bucket): key ``konnect.<konnect_id>`` holds a polling konnect's cursor (the ids
  or newest timestamp seen, the last poll and its error; :class:`~konnectz_contracts.triggers.polling.Cursor`).
- ``KZ_ACTIVE`` and ``KZ_CANCELS`` (KV buckets): runs that have not finished and cancel requests
  (:mod:`konnectz_contracts.run_control`); ``KZ_SLOTS``: each konnect's concurrency slots and its
  queue (the runner's ``slots``); ``KZ_BUDGETS``: each app account's rate bucket (the runner's ``budgets``).

Every stream and bucket is kept on :data:`NatsReplicas` servers: the setting ``KONNECTZ_NATS_REPLICAS``
(``nats_replicas``) of the api, the runners and the operator, which the chart sets from ``nats.replicas``.
Each creates its streams and buckets with it and brings existing ones to it when it starts.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from konnectz_contracts.limits import (
    EVENT_MAX_BYTES,
    RUN_MAX_BYTES,
)

__all__ = [
    "DUPLICATE_WINDOW_SECONDS",
    "EVENTS_CONSUMER",
    "EVENTS_MAX_DELIVER",
    "IDEMPOTENCY_RETENTION_SECONDS",
    "KV_IDEMPOTENCY",
    "KV_KONNECTS",
    "KV_LEADERS",
    "KV_POLLS",
    "KV_SCHEDULES",
    "KV_STEPS",
    "NATS_REPLICAS",
    "NATS_REPLICAS_ENV",
    "POOL_RUNS_PREFIX",
    "STEPS_RETENTION_SECONDS",
    "STREAM_EVENTS",
    "STREAM_RUNS",
    "SUBJECTS_EVENTS",
    "SUBJECTS_RUNS",
    "SUBJECTS_TIMERS",
    "Attempt",
    "CallerLink",
    "Continuation",
    "NatsReplicas",
    "RunRequest",
    "StepResult",
    "StepWait",
    "TaskEvent",
    "Unstorable",
    "WaitState",
    "encode_run",
    "event_subject",
    "fit_event",
    "konnect_key",
    "msg_id_headers",
    "pool_subjects",
    "run_subject",
    "use_pool_subjects",
]

#: How many servers keep a copy of every stream and KV bucket (JetStream's num_replicas): the setting
#: ``nats_replicas`` of the api, the runners and the operator, from :data:`NATS_REPLICAS_ENV` (the chart sets it
#: from ``nats.replicas``). 1 (the default): one server holds the data. 3 or 5: a JetStream cluster of at least
#: that many servers, where a stream stays writable while a majority of its replicas is up.
NatsReplicas = Annotated[int, Field(ge=1, le=5)]
NATS_REPLICAS: NatsReplicas = 1
NATS_REPLICAS_ENV = "KONNECTZ_NATS_REPLICAS"

STREAM_RUNS = "KZ_RUNS"
SUBJECTS_RUNS = "kz.runs.>"
STREAM_EVENTS = "KZ_EVENTS"
SUBJECTS_EVENTS = "kz.events.>"
SUBJECTS_TIMERS = "kz.timers.>"
KV_KONNECTS = "KZ_KONNECTS"
KV_SCHEDULES = "KZ_SCHEDULES"
KV_POLLS = "KZ_POLLS"
#: The locks of the duties one runner of a pool holds (the runner's ``election``).
KV_LEADERS = "KZ_LEADERS"
#: The step journal (the runner's ``journal``): each finished step of a run with effects.
KV_STEPS = "KZ_STEPS"
STEPS_RETENTION_SECONDS = 24 * 3600.0
#: The run started for a webhook's ``Idempotency-Key`` (the runner's ``idempotency``).
KV_IDEMPOTENCY = "KZ_IDEMPOTENCY"
IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600.0
# Publishes carrying the same Nats-Msg-Id within this window are stored once.
DUPLICATE_WINDOW_SECONDS = 120.0
#: The api's durable consumer of KZ_EVENTS; created with the stream so that events published before
#: the api first started are kept (interest retention keeps a message only for existing consumers).
EVENTS_CONSUMER = "api-task-logs"
#: Deliveries of one task event to the api before it gives up on storing it as sent (it then stores
#: an ERROR task log without the event's data, see konnectz_api.consumer). The api hands an event
#: back with a growing delay (up to 60 s), so this outlasts a database outage of about 3 hours.
EVENTS_MAX_DELIVER = 200
EVENTS_ACK_WAIT_SECONDS = 30.0


# Runs of konnects hosted by the shared runner pool (Kubernetes, runnerMode shared) live under
# ``kz.runs.pool.<id>``: the pool's consumer takes exactly those, and a dedicated runner's filter
# ``kz.runs.<id>`` never matches them. A pool runner process switches once, at start.
POOL_RUNS_PREFIX = "kz.runs.pool"
_runs_prefix = "kz.runs"


def use_pool_subjects() -> None:
    """Make this process the shared pool: its runs (webhooks, ticks, timers) go to ``kz.runs.pool.<id>``."""
    global _runs_prefix
    _runs_prefix = POOL_RUNS_PREFIX


def pool_subjects() -> bool:
    return _runs_prefix == POOL_RUNS_PREFIX


def run_subject(konnect_id: int) -> str:
    return f"{_runs_prefix}.{int(konnect_id)}"


def event_subject(konnect_id: int) -> str:
    return f"kz.events.{int(konnect_id)}"


def konnect_key(konnect_id: int) -> str:
    """The KZ_KONNECTS key that holds a konnect's FlowSpec JSON."""
    return f"konnect.{int(konnect_id)}"


def msg_id_headers(run_id: str) -> dict[str, str]:
    """Headers for a JetStream publish that the server deduplicates on ``run_id``."""
    return {"Nats-Msg-Id": run_id}


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Attempt(_Wire):
    """One failed attempt of a step that was retried: when, why, and how long the next one waited."""

    number: int
    started_at: AwareDatetime
    finished_at: AwareDatetime
    error: str
    failure: str
    status: int | None = None
    waited_seconds: float


class StepWait(_Wire):
    """What a step that waited for a decision (Wait for a Call, Approval; docs/waits.md) waited for,
    from when until when, and what ended the wait: ``call`` (a call to the resume URL, or an approver's
    decision: ``decided_by``), ``timeout``. The task log shows it beside ``wait_reason`` (the same in words)."""

    waiting_for: str = Field(max_length=300)
    since: AwareDatetime
    until: AwareDatetime
    resumed_by: Literal["call", "timeout", "cancel"]
    resumed_at: AwareDatetime
    decided_by: str | None = Field(default=None, max_length=320)


class StepResult(_Wire):
    """One step's record in a run. ``app`` is the step kind.

    - ``item_index``: set (0-based) for the steps after an iterator, which run once per item: such a
      step has one StepResult per item, in item order.
    - ``stop``: set on a filter whose conditions did not pass: why the run (or, after an iterator,
      that item) stopped there. The step's status is still SUCCESS, and so is the run's.
    """

    step_id: str
    name: str
    app: str = "api_call"
    status: Literal["SUCCESS", "ERROR", "SKIPPED"]
    started_at: AwareDatetime
    finished_at: AwareDatetime
    input: dict[str, Any]
    output: dict[str, Any] | None
    error: str | None = None
    item_index: int | None = None
    stop: str | None = None
    # paths: the router path the step ran on ("<router step id>/<path name>"); a step of a path
    # that was not chosen is recorded with status "SKIPPED" and ``stop`` saying why.
    path: str | None = None
    # rate budgets
    waited_seconds: float | None = None
    wait_reason: str | None = None
    # on_error: the attempts that failed before the last one (konnectz_contracts.on_error), oldest first;
    # ``continued``: the step failed (status ERROR) and the run went on with its error as its output
    retries: list[Attempt] | None = None
    continued: bool | None = None
    # waits: what a Wait for a Call or an Approval waited for and what resumed it
    wait: StepWait | None = None


class WaitState(_Wire):
    """A run suspended in a Wait step (:mod:`konnectz_contracts.waits`): until a call to its resume URL,
    or its timeout. ``decided`` is None in the waiting run (the timeout's timer); the run that resumes
    carries who decided (``call``: ``body`` is the call's data; ``timeout``; ``cancel``)."""

    key: str  # the KZ_WAITS key (konnectz_contracts.waits.wait_key)
    since: AwareDatetime
    until: AwareDatetime  # the timeout
    on_timeout: Literal["continue", "stop", "fail"] = "continue"
    decided: Literal["call", "timeout", "cancel"] | None = None
    decided_at: AwareDatetime | None = None
    body: dict[str, Any] | None = None
    # Whom the run waits for, in words (an Approval: its approvers); None: a call to its resume URL.
    waiting_for: str | None = None
    # Call a flow (docs/sub-flows.md): the called run this wait is for; ``body`` is then its result
    # (konnectz_runner.work.subflows.CalleeResult), decided by whoever ended the called run.
    called_run: str | None = Field(default=None, max_length=64)


class Continuation(_Wire):
    """Where a suspended run goes on: after step ``after_step``, with what it has so far."""

    after_step: str
    resume_at: AwareDatetime
    started_at: AwareDatetime
    outputs: dict[str, Any]  # node id -> output, the trigger's included
    steps: list[StepResult]  # the steps run so far; the one final TaskEvent lists them all
    # The konnect's revision (FlowSpec.revision) the run started on: it resumes on it (KZ_REVISIONS).
    revision: int | None = None
    # Set when the run waits in a Wait step (a call or its timeout) rather than a delay.
    wait: WaitState | None = None


class CallerLink(_Wire):
    """Call a flow (docs/sub-flows.md): the run and Call a Flow step that started this run. ``wait``: the
    caller waits for this run's result (its wait is decided when this run ends); ``depth``: how many
    calls deep this run is (1: called by a flow that nobody called)."""

    konnect_id: int
    konnect_name: str = Field(default="", max_length=200)
    run_id: str = Field(max_length=64)
    step_id: str = Field(max_length=100)
    wait: bool = False
    depth: int = Field(default=1, ge=1, le=100)


class RunRequest(_Wire):
    run_id: str
    konnect_id: int
    trigger_output: dict[str, Any]
    received_at: AwareDatetime
    source: Literal["webhook", "schedule", "form", "polling", "test", "call"] = "webhook"
    # A schedule's fire this run stands for (the same fire is run once: KZ_SCHEDULES).
    scheduled_for: AwareDatetime | None = None
    # Set when a delayed run resumes: the steps before the delay are not run again.
    resume: Continuation | None = None
    # W3C traceparent of the ingress span: the worker continues the run's trace from it.
    traceparent: str | None = None
    # A replay (from the api) of an earlier run: that run's run_id.
    replay_of: str | None = None
    # respond: the core NATS subject the ingress waits on for the webhook's answer
    # (konnectz_contracts.responses); None: the caller was answered at once.
    respond_to: str | None = Field(default=None, max_length=200)
    # Call a flow: the run (and step) that started this one, when another flow called it.
    called_by: CallerLink | None = None


class TaskEvent(_Wire):
    run_id: str
    konnect_id: int
    owner_id: int
    konnect_name: str
    status: Literal["SUCCESS", "ERROR", "CANCELLED"]
    started_at: AwareDatetime
    finished_at: AwareDatetime
    trigger_id: str
    trigger_output: dict[str, Any]
    steps: list[StepResult]
    #: Set when the run was refused before any step ran (e.g. over its task quota): why. Such a run
    #: counts no task; ``steps`` holds one ERROR record with the same reason for the task log.
    refused: str | None = None
    #: The OpenTelemetry trace id of the run (32 hex digits) when it was traced; kept on the task log.
    trace_id: str | None = None
    #: The span id of the run's ``run`` span, so the api's span joins the same trace under it.
    span_id: str | None = None
    #: How many times the run message was delivered to a worker before this outcome (1 = first try).
    attempts: int = 1
    #: The run_id of the run this one replays, if it is a replay.
    replay_of: str | None = None
    # revisions
    #: The konnect's revision (FlowSpec.revision) the run executed; None for specs published before revisions.
    revision: int | None = None
    # run control
    #: Who cancelled the run (the user's e-mail) when ``status`` is CANCELLED.
    cancelled_by: str | None = None
    # call a flow
    #: The run that called this one (another flow's Call a Flow step), if any.
    called_by: CallerLink | None = None


class Unstorable(ValueError):
    """A run that can never be stored: ``status`` is the HTTP status that says so (400 or 413)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def encode_run(run: RunRequest) -> bytes:
    """The run as stored in KZ_RUNS; raises :class:`Unstorable` for data that cannot be stored
    (a lone surrogate, nesting too deep to serialise) or that is larger than
    :data:`~konnectz_contracts.limits.RUN_MAX_BYTES`."""
    try:
        data = run.model_dump_json().encode()
    except (PydanticSerializationError, UnicodeError, RecursionError) as exc:
        detail = str(exc).removeprefix("Error serializing to JSON: ")
        if "surrogate" in detail:
            detail = "it holds a lone UTF-16 surrogate (such as \\ud800), which is not a character"
        raise Unstorable(400, f"The request cannot be stored as UTF-8 JSON: {detail}") from exc
    if len(data) > RUN_MAX_BYTES:
        raise Unstorable(
            413, f"The request is {len(data)} bytes once stored as JSON; the limit is {RUN_MAX_BYTES} bytes"
        )
    return data


def _drop(what: str, size: int) -> dict[str, Any]:
    return {
        "truncated": True,
        "bytes": size,
        "message": f"{what} ({size} bytes) was too large to keep in the task log (the limit of a run's "
        f"task event is {EVENT_MAX_BYTES} bytes), so it was dropped.",
    }


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return EVENT_MAX_BYTES + 1


def fit_event(event: TaskEvent, limit: int = EVENT_MAX_BYTES) -> tuple[TaskEvent, bytes]:
    """The event as stored in KZ_EVENTS, within ``limit`` bytes: when it is larger (or holds data
    that cannot be stored as UTF-8 JSON), its largest values (the request, then the steps' inputs and
    outputs, largest first) are replaced by a note saying why. Steps, statuses and errors stay."""
    try:
        data = event.model_dump_json().encode()
        if len(data) <= limit:
            return event, data
    except (PydanticSerializationError, UnicodeError, RecursionError):
        pass
    trigger_output: dict[str, Any] = event.trigger_output
    steps = [step.model_copy() for step in event.steps]
    # (size, kind, index): the trigger's data is index -1.
    parts: list[tuple[int, str, int]] = [(_size(trigger_output), "request", -1)]
    for i, step in enumerate(steps):
        parts.append((_size(step.input), "input", i))
        if step.output is not None:
            parts.append((_size(step.output), "output", i))
    parts.sort(reverse=True)
    fitted = event
    for size, kind, index in parts:
        if kind == "request":
            trigger_output = _drop("The request", size)
        elif kind == "input":
            steps[index].input = _drop(f"The input of step {steps[index].step_id}", size)
        else:
            steps[index].output = _drop(f"The output of step {steps[index].step_id}", size)
        fitted = event.model_copy(update={"trigger_output": trigger_output, "steps": steps})
        try:
            data = fitted.model_dump_json().encode()
        except (PydanticSerializationError, UnicodeError, RecursionError):
            continue
        if len(data) <= limit:
            return fitted, data
    # Only the step list itself is too large (thousands of iterator items): keep the first ones.
    while len(steps) > 1:
        steps = steps[: len(steps) // 2]
        fitted = fitted.model_copy(update={"steps": steps})
        data = fitted.model_dump_json().encode()
        if len(data) <= limit:
            return fitted, data
    return fitted, fitted.model_dump_json().encode()
