"""Konnectz runner: executes compiled flow specs, serves webhooks, emits task events.

The public API is re-exported here (checked by tests/test_exports.py).
"""

from konnectz_runner.config import Settings
from konnectz_runner.engine import execute, step_result
from konnectz_runner.errors import ConfigError, ConnectFailed, RefusedError, RunnerError, StepError
from konnectz_runner.events import (
    KV_KONNECTS,
    STREAM_EVENTS,
    STREAM_RUNS,
    SUBJECTS_EVENTS,
    SUBJECTS_RUNS,
    RunRequest,
    StepResult,
    TaskEvent,
    ensure_streams,
    event_subject,
    konnect_key,
    msg_id_headers,
    publish_event,
    publish_run,
    run_subject,
)
from konnectz_runner.model import Outcome, StepContext
from konnectz_runner.netguard import NetGuard, guarded_transport, parse_networks
from konnectz_runner.refs import build_json_body, resolve, resolve_value
from konnectz_runner.spec import ApiCallStep, FlowSpec, KeyValue, Step, Trigger, WebhookTrigger

__all__ = [
    "KV_KONNECTS",
    "STREAM_EVENTS",
    "STREAM_RUNS",
    "SUBJECTS_EVENTS",
    "SUBJECTS_RUNS",
    "ApiCallStep",
    "ConfigError",
    "ConnectFailed",
    "FlowSpec",
    "KeyValue",
    "NetGuard",
    "Outcome",
    "RefusedError",
    "RunRequest",
    "RunnerError",
    "Settings",
    "Step",
    "StepContext",
    "StepError",
    "StepResult",
    "TaskEvent",
    "Trigger",
    "WebhookTrigger",
    "build_json_body",
    "ensure_streams",
    "event_subject",
    "execute",
    "guarded_transport",
    "konnect_key",
    "msg_id_headers",
    "parse_networks",
    "publish_event",
    "publish_run",
    "resolve",
    "resolve_value",
    "run_subject",
    "step_result",
]
