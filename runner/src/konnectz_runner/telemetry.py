"""Prometheus metrics and OpenTelemetry traces of the runner (the api adds its own, see its observability module).

Metrics (``GET /metrics`` on the runner):

- ``konnectz_runs_accepted_total{source}``: runs stored in JetStream by the ingress (webhook, form, ...).
- ``konnectz_runs_refused_total{reason}``: requests answered 429/503 instead (``backpressure``, ``nats``).
- ``konnectz_runs_running``: runs executing in this process now.
- ``konnectz_runs_finished_total{status}``: runs whose task event was published (SUCCESS / ERROR).
- ``konnectz_runs_failed_total``: runs that failed unexpectedly in the runner (redelivered later).
- ``konnectz_run_queue_depth``: accepted runs not finished yet (the KZ_RUNS consumer's pending + unacked).
- ``konnectz_step_seconds{kind}``: step latency histogram.

Traces: one trace per run. The ingress starts it (span ``webhook``); its W3C ``traceparent`` travels
in the RunRequest, the worker continues it (``run`` with one child span per step), and the trace id
is stored on the task log (``task_logs.trace_id``), where the api's consumer adds its ``store`` span.
Tracing is on only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (spans exported over OTLP/HTTP,
``OTEL_TRACES_SAMPLER`` and the other standard variables apply); otherwise OpenTelemetry's no-op
tracer is used, spans cost nothing and task logs carry no trace id.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import threading
from typing import Any, TextIO

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client import Counter, Gauge, Histogram

__all__ = [
    "RUNS_ACCEPTED",
    "RUNS_FAILED",
    "RUNS_FINISHED",
    "RUNS_REFUSED",
    "RUNS_RUNNING",
    "RUN_QUEUE_DEPTH",
    "STEP_SECONDS",
    "WEBHOOK_ANSWERS",
    "carrier_of",
    "context_of",
    "dump_tasks",
    "setup_tracing",
    "span",
    "trace_id_hex",
    "tracer",
    "watch_loop",
]

RUNS_ACCEPTED = Counter("konnectz_runs_accepted", "Runs stored in JetStream by the ingress", ["source"])
RUNS_REFUSED = Counter("konnectz_runs_refused", "Trigger requests refused (429/503) by the ingress", ["reason"])
WEBHOOK_ANSWERS = Counter(
    "konnectz_webhook_answers", "Held webhooks answered: by their run, 202 as it waits, 202 at the timeout", ["how"]
)
RUNS_RUNNING = Gauge("konnectz_runs_running", "Runs executing in this process")
RUNS_FINISHED = Counter("konnectz_runs_finished", "Runs whose task event was published", ["status"])
RUNS_FAILED = Counter("konnectz_runs_failed", "Runs that failed unexpectedly in the runner (redelivered)")
RUN_QUEUE_DEPTH = Gauge("konnectz_run_queue_depth", "Accepted runs not finished yet (pending + unacknowledged)")
STEP_SECONDS = Histogram(
    "konnectz_step_seconds",
    "Step latency",
    ["kind"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
STEP_RETRIES = Counter(
    "konnectz_step_retries", "Failed step attempts retried by the step's on_error policy", ["kind", "failure"]
)

# The event loops of this process (the ingress's and the run worker's), so a stuck process can say which
# coroutine each of its loops waits in: ``kill -USR2 <pid>`` prints every asyncio task's stack to stderr
# (``kill -USR1`` prints the threads' stacks; the tests send both before they kill a runner that did not
# stop in time). A thread's stack alone shows a loop idle in its selector, not which task never ends.
_LOOPS: list[tuple[str, asyncio.AbstractEventLoop]] = []
_LOOPS_LOCK = threading.Lock()


def watch_loop(name: str, loop: asyncio.AbstractEventLoop) -> None:
    """Name a running loop for :func:`dump_tasks` (closed loops are forgotten there)."""
    with _LOOPS_LOCK:
        _LOOPS[:] = [(n, lp) for n, lp in _LOOPS if not lp.is_closed()]
        _LOOPS.append((name, loop))


def dump_tasks(file: TextIO | None = None) -> int:
    """Print the stack of every unfinished task of every watched loop; returns how many were printed.

    Safe from a signal handler in another thread than the loops': ``asyncio.all_tasks(loop)`` copies a
    weak set that the loop's thread may change meanwhile, so it is read again when that happens."""
    out = file or sys.stderr
    with _LOOPS_LOCK:
        loops = list(_LOOPS)
    printed = 0
    for name, loop in loops:
        tasks: list[asyncio.Task[Any]] = []
        for _ in range(5):
            try:
                tasks = list(asyncio.all_tasks(loop))
                break
            except RuntimeError:  # the set changed size while it was copied
                continue
        state = "closed" if loop.is_closed() else ("running" if loop.is_running() else "stopped")
        print(f"--- asyncio loop {name!r} ({state}): {len(tasks)} unfinished task(s)", file=out)
        for task in tasks:
            print(f"- {task.get_name()}: {task.get_coro()!r}", file=out)
            task.print_stack(limit=25, file=out)
            printed += 1
    out.flush()
    return printed


_propagator = TraceContextTextMapPropagator()
_configured = False
# Whether spans are recorded (a provider with an exporter is installed). Without one the hot paths
# skip span creation: even OpenTelemetry's no-op spans cost about 5 % of a run's CPU (the ingress
# and per-step spans, their context attach/detach).
RECORDING = False


def setup_tracing(service: str) -> None:
    """Install the tracer provider once; OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set."""
    global _configured, RECORDING
    if _configured:
        return
    _configured = True
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return  # the API's no-op tracer; the hot paths skip their spans (RECORDING stays False)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    RECORDING = True


def span(name: str, attributes: dict[str, Any]) -> Any:
    """``tracer().start_as_current_span(name, attributes=...)`` when spans are recorded, else a context
    manager that does nothing and yields None."""
    if not RECORDING:
        return contextlib.nullcontext()
    return tracer().start_as_current_span(name, attributes=attributes)


@functools.cache
def tracer() -> trace.Tracer:
    """The runner's tracer (a proxy: it follows the provider :func:`setup_tracing` installs)."""
    return trace.get_tracer("konnectz")


def carrier_of(span: trace.Span) -> str | None:
    """The W3C traceparent of ``span`` (to put in a RunRequest)."""
    carrier: dict[str, str] = {}
    _propagator.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


def context_of(traceparent: str | None) -> Any:
    """The context to continue a trace from a traceparent (a new trace when None)."""
    return _propagator.extract({"traceparent": traceparent} if traceparent else {})


def trace_id_hex(span: trace.Span) -> str | None:
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}" if ctx.trace_id else None
