"""JetStream I/O of the wire contract (:mod:`konnectz_contracts.events`): the streams, buckets and
consumer as Konnectz creates them, and publishing runs and task events."""

from __future__ import annotations

import copy
import logging

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    KeyValueConfig,
    PubAck,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError

from konnectz_contracts.budgets import KV_BUDGETS
from konnectz_contracts.budgets import TTL_SECONDS as BUDGET_TTL
from konnectz_contracts.events import (
    DUPLICATE_WINDOW_SECONDS,
    EVENTS_ACK_WAIT_SECONDS,
    EVENTS_CONSUMER,
    EVENTS_MAX_DELIVER,
    IDEMPOTENCY_RETENTION_SECONDS,
    KV_IDEMPOTENCY,
    KV_KONNECTS,
    KV_POLLS,
    KV_SCHEDULES,
    KV_STEPS,
    NATS_REPLICAS,
    STEPS_RETENTION_SECONDS,
    STREAM_EVENTS,
    STREAM_RUNS,
    SUBJECTS_EVENTS,
    SUBJECTS_RUNS,
    SUBJECTS_TIMERS,
    RunRequest,
    TaskEvent,
    encode_run,
    event_subject,
    fit_event,
    msg_id_headers,
    run_subject,
)
from konnectz_contracts.limits import (
    EVENT_MAX_BYTES,
    EVENTS_MAX_AGE_SECONDS,
    EVENTS_MAX_BYTES,
    RUN_MAX_BYTES,
    RUNS_MAX_AGE_SECONDS,
)
from konnectz_contracts.quota import BLOCK_SECONDS, KV_QUOTA_BLOCKS
from konnectz_runner.bus.active import bucket_configs as run_state_buckets
from konnectz_runner.bus.capture import ensure_capture
from konnectz_runner.bus.kv import ensure_bucket_settings, kv_config
from konnectz_runner.bus.waits import bucket_configs as wait_bucket_configs

__all__ = ["ensure_streams", "events_consumer_config", "publish_event", "publish_run", "stream_configs"]

log = logging.getLogger(__name__)
_STREAM_NAME_IN_USE = 10058  # JetStream API error code
_NO_PLACEMENT = 10005  # "no suitable peers for placement": fewer servers than replicas


def stream_configs(replicas: int = NATS_REPLICAS) -> list[StreamConfig]:
    """KZ_RUNS and KZ_EVENTS as Konnectz creates them: retention and bounds stated, not defaulted, on
    ``replicas`` servers (the setting ``nats_replicas``)."""
    return [
        StreamConfig(
            name=STREAM_RUNS,
            subjects=[SUBJECTS_RUNS, SUBJECTS_TIMERS],
            storage=StorageType.FILE,
            retention=RetentionPolicy.LIMITS,  # the worker deletes each finished run
            max_msg_size=RUN_MAX_BYTES,
            max_bytes=-1,  # see konnectz_contracts.limits: back-pressure bounds it
            max_age=RUNS_MAX_AGE_SECONDS,
            discard=DiscardPolicy.OLD,  # message schedules refuse DiscardPolicy.NEW; only max_age discards
            duplicate_window=DUPLICATE_WINDOW_SECONDS,
            allow_msg_schedules=True,
            num_replicas=replicas,
        ),
        StreamConfig(
            name=STREAM_EVENTS,
            subjects=[SUBJECTS_EVENTS],
            storage=StorageType.FILE,
            retention=RetentionPolicy.INTEREST,
            max_msg_size=EVENT_MAX_BYTES,
            max_bytes=EVENTS_MAX_BYTES,
            max_age=EVENTS_MAX_AGE_SECONDS,
            discard=DiscardPolicy.NEW,
            duplicate_window=DUPLICATE_WINDOW_SECONDS,
            num_replicas=replicas,
        ),
    ]


def events_consumer_config(max_ack_pending: int = 2000) -> ConsumerConfig:
    """The api's durable consumer of KZ_EVENTS."""
    return ConsumerConfig(
        durable_name=EVENTS_CONSUMER,
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=EVENTS_ACK_WAIT_SECONDS,
        max_deliver=EVENTS_MAX_DELIVER,
        max_ack_pending=max_ack_pending,
        filter_subject=SUBJECTS_EVENTS,
    )


_BOUNDS = ("max_msg_size", "max_bytes", "max_age", "discard", "num_replicas")


async def _ensure_stream(js: JetStreamContext, config: StreamConfig, *, retention: bool = True) -> None:
    """Create the stream, or apply the bounds of ``config`` to an existing one (and its retention,
    unless ``retention`` is False: a new stream is then created with limits retention)."""
    assert config.name is not None
    try:
        info = await js.stream_info(config.name)
    except NotFoundError:
        if not retention:
            config = copy.copy(config)
            config.retention = RetentionPolicy.LIMITS
        try:
            await js.add_stream(config)
        except BadRequestError as exc:
            if exc.err_code != _STREAM_NAME_IN_USE:  # another process created it meanwhile
                raise
        return
    # Exists: keep what a cluster install tuned (placement), but apply the bounds and the replicas, and
    # the retention where NATS allows changing it (limits -> interest).
    current = info.config
    changed = False
    for field in _BOUNDS:
        if getattr(current, field) != getattr(config, field):
            setattr(current, field, getattr(config, field))
            changed = True
    if retention and current.retention != config.retention:
        if config.retention == RetentionPolicy.INTEREST and current.retention == RetentionPolicy.LIMITS:
            current.retention = config.retention
            changed = True
        else:
            log.warning("Stream %s has %s retention, not %s", config.name, current.retention, config.retention)
    if changed:
        replicas = info.config.num_replicas
        try:
            await js.update_stream(current)
        except Exception as exc:
            if replicas != config.num_replicas:  # the data would not be where the setting says: not started
                raise RuntimeError(
                    f"Stream {config.name}: its replicas could not be changed from {replicas} to "
                    f"{config.num_replicas} (KONNECTZ_NATS_REPLICAS; a JetStream cluster of at least that many "
                    f"servers is needed): {exc or type(exc).__name__}"
                ) from exc
            log.warning("Stream %s: its bounds could not be applied (%s)", config.name, exc or type(exc).__name__)


async def _allow_timers(js: JetStreamContext) -> None:
    """Let KZ_RUNS hold timers: add ``kz.timers.>`` and message schedules to a stream made without them."""
    config = (await js.stream_info(STREAM_RUNS)).config
    subjects = list(config.subjects or [])
    if config.allow_msg_schedules and SUBJECTS_TIMERS in subjects:
        return
    if SUBJECTS_TIMERS not in subjects:
        subjects.append(SUBJECTS_TIMERS)
    config.subjects = subjects
    config.allow_msg_schedules = True
    await js.update_stream(config)


async def _ensure_bucket(js: JetStreamContext, config: KeyValueConfig) -> None:
    """Create the bucket, or bring an existing one to ``config.replicas``."""
    try:
        await js.key_value(config.bucket)
        await ensure_bucket_settings(js, f"KV_{config.bucket}", config.replicas)
    except BucketNotFoundError:
        try:
            await js.create_key_value(config)
        except BadRequestError as exc:
            if exc.err_code != _STREAM_NAME_IN_USE:
                raise


async def ensure_streams(js: JetStreamContext, replicas: int = NATS_REPLICAS) -> None:
    """Create the streams and buckets if missing (and let KZ_RUNS hold timers), with the capture
    stream/bucket (:mod:`konnectz_runner.bus.capture`), on ``replicas`` servers (the setting ``nats_replicas``);
    existing ones are brought to ``replicas``. Safe to call from every process."""
    try:
        await _ensure_streams(js, replicas)
    except BadRequestError as exc:
        if exc.err_code != _NO_PLACEMENT:
            raise
        raise RuntimeError(
            f"JetStream cannot keep the streams and buckets on {replicas} servers (KONNECTZ_NATS_REPLICAS; the "
            f"chart's nats.replicas): the NATS cluster has fewer servers with JetStream ({exc.description})"
        ) from exc


async def _ensure_streams(js: JetStreamContext, replicas: int) -> None:
    await ensure_capture(js, replicas)
    runs, events = stream_configs(replicas)
    await _ensure_stream(js, runs)
    # KZ_EVENTS keeps an event only for the consumers that exist when it is stored (interest
    # retention): the stream gets the api's consumer before it gets that retention.
    await _ensure_stream(js, events, retention=False)
    try:
        await js.consumer_info(STREAM_EVENTS, EVENTS_CONSUMER)
    except NotFoundError:
        await js.add_consumer(STREAM_EVENTS, config=events_consumer_config())
    await _ensure_stream(js, events)
    await _allow_timers(js)
    for bucket in (KV_KONNECTS, KV_SCHEDULES, KV_POLLS):
        await _ensure_bucket(js, kv_config(bucket, replicas=replicas))
    for bucket, ttl in (
        (KV_STEPS, STEPS_RETENTION_SECONDS),
        (KV_IDEMPOTENCY, IDEMPOTENCY_RETENTION_SECONDS),
        (KV_QUOTA_BLOCKS, BLOCK_SECONDS),
        (KV_BUDGETS, BUDGET_TTL),
    ):
        await _ensure_bucket(js, kv_config(bucket, ttl=ttl, replicas=replicas))
    for config in run_state_buckets(replicas):  # KZ_ACTIVE, KZ_CANCELS (konnectz_runner.bus.active)
        await _ensure_bucket(js, config)
    for config in wait_bucket_configs(replicas):  # KZ_WAITS, KZ_REVISIONS (konnectz_runner.bus.waits)
        await _ensure_bucket(js, config)


PUBLISH_TIMEOUT_SECONDS = 5.0


async def publish_run(js: JetStreamContext, run: RunRequest, *, ack_timeout: float = PUBLISH_TIMEOUT_SECONDS) -> PubAck:
    """Store a run in KZ_RUNS; returns once JetStream acknowledged it (raises otherwise; raises
    :class:`Unstorable` for a run that can never be stored)."""
    return await js.publish(
        run_subject(run.konnect_id),
        encode_run(run),
        headers=msg_id_headers(run.run_id),
        timeout=ack_timeout,
        stream=STREAM_RUNS,
    )


async def publish_event(
    js: JetStreamContext, event: TaskEvent, *, ack_timeout: float = PUBLISH_TIMEOUT_SECONDS
) -> PubAck:
    """Store a task event in KZ_EVENTS; returns once JetStream acknowledged it (raises otherwise).
    An event larger than the stream allows is trimmed first (:func:`fit_event`)."""
    _fitted, data = fit_event(event)
    return await js.publish(
        event_subject(event.konnect_id),
        data,
        headers=msg_id_headers(event.run_id),
        timeout=ack_timeout,
        stream=STREAM_EVENTS,
    )
