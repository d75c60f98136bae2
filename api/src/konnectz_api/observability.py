"""Prometheus metrics of the api (``GET /metrics``) and its part of each run's trace.

- ``konnectz_task_events_stored_total{status}``: task logs created from task events.
- ``konnectz_task_events_duplicate_total``: redelivered events (already stored) and events of unknown konnects.
- ``konnectz_task_events_failed_total``: events that could not be stored (redelivered later).
- ``konnectz_task_event_batch_seconds``: time to store one batch (one transaction).
- ``konnectz_task_event_queue_depth``: task events waiting in KZ_EVENTS for this consumer.
- ``konnectz_runs_finished_total{status}``: runs persisted, by status; ``konnectz_runs_failed_total``: of them ERROR.
- ``konnectz_step_seconds{kind}``: step latency, from the stored events.

The runner's metrics (accepted, running, queue depth) are on the runner's own ``/metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry import trace
from prometheus_client import Counter, Gauge, Histogram

from konnectz_contracts.events import TaskEvent
from konnectz_runner import RUNS_FAILED, RUNS_FINISHED, STEP_SECONDS, tracer

STORED = Counter("konnectz_task_events_stored", "Task logs created from task events", ["status"])
DUPLICATE = Counter("konnectz_task_events_duplicate", "Task events already stored or of unknown konnects")
FAILED = Counter("konnectz_task_events_failed", "Task events that could not be stored (redelivered)")
BATCH_SECONDS = Histogram("konnectz_task_event_batch_seconds", "Time to store one batch of task events")
QUEUE_DEPTH = Gauge("konnectz_task_event_queue_depth", "Task events waiting for the api's consumer")


def record_stored(events: Sequence[TaskEvent], outcomes: Sequence[bool | None], seconds: float) -> None:
    BATCH_SECONDS.observe(seconds)
    for event, stored in zip(events, outcomes, strict=True):
        if stored is None:
            FAILED.inc()
            continue
        if not stored:
            DUPLICATE.inc()
            continue
        STORED.labels(event.status).inc()
        RUNS_FINISHED.labels(event.status).inc()
        if event.status == "ERROR":
            RUNS_FAILED.inc()  # in the api: runs persisted with status ERROR
        for step in event.steps:
            STEP_SECONDS.labels(step.app).observe((step.finished_at - step.started_at).total_seconds())
        if event.trace_id:
            _store_span(event, seconds)


def _store_span(event: TaskEvent, seconds: float) -> None:
    """The consumer's span in the run's trace (a child of the run, ended when the batch was stored)."""
    try:
        parent = trace.SpanContext(
            trace_id=int(event.trace_id or "0", 16),
            span_id=int(event.span_id or "0", 16) or 1,
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
        )
    except ValueError:
        return
    ctx = trace.set_span_in_context(trace.NonRecordingSpan(parent))
    span = tracer().start_span("store task log", context=ctx, attributes={"konnectz.run_id": event.run_id})
    span.end()
