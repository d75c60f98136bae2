"""The wire contract between webhook ingress, runner workers and the api, on NATS JetStream.

- ``KZ_RUNS`` (subjects ``kz.runs.>``): one :class:`RunRequest` per accepted trigger, on
  ``kz.runs.<konnect_id>`` with header ``Nats-Msg-Id = run_id``.
- ``KZ_EVENTS`` (subjects ``kz.events.>``): one :class:`TaskEvent` per finished run, on
  ``kz.events.<konnect_id>`` with header ``Nats-Msg-Id = run_id``. The api stores it as one task
  log and dedupes on ``run_id``, so a redelivered run is harmless.
- ``KZ_KONNECTS`` (KV bucket): key ``konnect.<konnect_id>`` holds the published
  :class:`~konnectz_runner.spec.FlowSpec` as JSON. The LocalDeployer writes it; runners watch it.
"""

from __future__ import annotations

from typing import Any, Literal

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, PubAck, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError
from pydantic import AwareDatetime, BaseModel, ConfigDict

__all__ = [
    "DUPLICATE_WINDOW_SECONDS",
    "KV_KONNECTS",
    "STREAM_EVENTS",
    "STREAM_RUNS",
    "SUBJECTS_EVENTS",
    "SUBJECTS_RUNS",
    "RunRequest",
    "StepResult",
    "TaskEvent",
    "ensure_streams",
    "event_subject",
    "konnect_key",
    "msg_id_headers",
    "publish_event",
    "publish_run",
    "run_subject",
]

STREAM_RUNS = "KZ_RUNS"
SUBJECTS_RUNS = "kz.runs.>"
STREAM_EVENTS = "KZ_EVENTS"
SUBJECTS_EVENTS = "kz.events.>"
KV_KONNECTS = "KZ_KONNECTS"
# Publishes carrying the same Nats-Msg-Id within this window are stored once.
DUPLICATE_WINDOW_SECONDS = 120.0
_STREAM_NAME_IN_USE = 10058  # JetStream API error code


def run_subject(konnect_id: int) -> str:
    return f"kz.runs.{int(konnect_id)}"


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


class RunRequest(_Wire):
    run_id: str
    konnect_id: int
    trigger_output: dict[str, Any]
    received_at: AwareDatetime
    source: Literal["webhook", "schedule", "test"] = "webhook"


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
    status: Literal["SUCCESS", "ERROR"]
    started_at: AwareDatetime
    finished_at: AwareDatetime
    input: dict[str, Any]
    output: dict[str, Any] | None
    error: str | None = None
    item_index: int | None = None
    stop: str | None = None


class TaskEvent(_Wire):
    run_id: str
    konnect_id: int
    owner_id: int
    konnect_name: str
    status: Literal["SUCCESS", "ERROR"]
    started_at: AwareDatetime
    finished_at: AwareDatetime
    trigger_id: str
    trigger_output: dict[str, Any]
    steps: list[StepResult]
    #: Set when the run was refused before any step ran (e.g. over its task quota): why. Such a run
    #: counts no task; ``steps`` holds one ERROR record with the same reason for the task log.
    refused: str | None = None


async def _ensure_stream(js: JetStreamContext, config: StreamConfig) -> None:
    assert config.name is not None
    try:
        await js.stream_info(config.name)
        return  # exists: leave it alone, a cluster install may have tuned replicas or limits
    except NotFoundError:
        pass
    try:
        await js.add_stream(config)
    except BadRequestError as exc:
        if exc.err_code != _STREAM_NAME_IN_USE:  # another process created it meanwhile
            raise


async def ensure_streams(js: JetStreamContext) -> None:
    """Create KZ_RUNS, KZ_EVENTS and the KZ_KONNECTS bucket if missing. Safe to call from every process."""
    for name, subjects in ((STREAM_RUNS, SUBJECTS_RUNS), (STREAM_EVENTS, SUBJECTS_EVENTS)):
        await _ensure_stream(
            js,
            StreamConfig(
                name=name,
                subjects=[subjects],
                storage=StorageType.FILE,
                duplicate_window=DUPLICATE_WINDOW_SECONDS,
            ),
        )
    try:
        await js.key_value(KV_KONNECTS)
    except BucketNotFoundError:
        try:
            await js.create_key_value(KeyValueConfig(bucket=KV_KONNECTS, history=1, storage=StorageType.FILE))
        except BadRequestError as exc:
            if exc.err_code != _STREAM_NAME_IN_USE:
                raise


PUBLISH_TIMEOUT_SECONDS = 5.0


async def publish_run(js: JetStreamContext, run: RunRequest, *, ack_timeout: float = PUBLISH_TIMEOUT_SECONDS) -> PubAck:
    """Store a run in KZ_RUNS; returns once JetStream acknowledged it (raises otherwise)."""
    return await js.publish(
        run_subject(run.konnect_id),
        run.model_dump_json().encode(),
        headers=msg_id_headers(run.run_id),
        timeout=ack_timeout,
        stream=STREAM_RUNS,
    )


async def publish_event(
    js: JetStreamContext, event: TaskEvent, *, ack_timeout: float = PUBLISH_TIMEOUT_SECONDS
) -> PubAck:
    """Store a task event in KZ_EVENTS; returns once JetStream acknowledged it (raises otherwise)."""
    return await js.publish(
        event_subject(event.konnect_id),
        event.model_dump_json().encode(),
        headers=msg_id_headers(event.run_id),
        timeout=ack_timeout,
        stream=STREAM_EVENTS,
    )
