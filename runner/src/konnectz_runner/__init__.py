"""Konnectz runner: executes compiled flow specs, serves webhooks, emits task events.

This is the runner's public facade: the api, the operator and the dev stack import the runner only
from here (``from konnectz_runner import ...``), never from a ``konnectz_runner.<submodule>``
(checked by runner/tests/test_exports.py). The contracts the runner executes (the flow spec, the
step and trigger configs, the wire models, the errors) are :mod:`konnectz_contracts`.
"""

from konnectz_runner.active import LIST_LIMIT, cancel_requested, get_active, list_active, request_cancel
from konnectz_runner.active import buckets as run_state_buckets
from konnectz_runner.active import clear as clear_active
from konnectz_runner.active import mark as mark_active
from konnectz_runner.active import wake as wake_waiting
from konnectz_runner.app_request import (
    AppRequest,
    build_event_request,
    build_test_request,
    dig,
    hook_error,
    is_expired,
    items_at,
    picked,
    secret_values,
)
from konnectz_runner.budgets import Budgets, budget_usage
from konnectz_runner.capture import close_window, last_capture, open_window
from konnectz_runner.catalogue import (
    GENERATED_BUNDLE,
    BundleIndex,
    CatalogueError,
    default_root,
    load_catalogue,
    load_manifest,
)
from konnectz_runner.config import Settings
from konnectz_runner.engine import execute, step_result
from konnectz_runner.events import ensure_streams, events_consumer_config, publish_event, publish_run, stream_configs
from konnectz_runner.journal import IN_DOUBT_ERROR
from konnectz_runner.model import Outcome, StepContext
from konnectz_runner.netguard import IPNetwork, NetGuard, guarded_transport, parse_networks
from konnectz_runner.outage import Outage, nats_callbacks
from konnectz_runner.outbound import ERROR_BODY_CHARS, parse_body
from konnectz_runner.outbound import send as send_outbound
from konnectz_runner.poller import app_items
from konnectz_runner.step_secrets import origin_of
from konnectz_runner.steps import KINDS, run_step
from konnectz_runner.steps.app_event import remember_account
from konnectz_runner.steps.join import merge as join_merge
from konnectz_runner.telemetry import RUNS_FAILED, RUNS_FINISHED, STEP_SECONDS, setup_tracing, tracer

__all__ = [
    "ERROR_BODY_CHARS",
    "GENERATED_BUNDLE",
    "IN_DOUBT_ERROR",
    "KINDS",
    "LIST_LIMIT",
    "RUNS_FAILED",
    "RUNS_FINISHED",
    "STEP_SECONDS",
    "AppRequest",
    "Budgets",
    "BundleIndex",
    "CatalogueError",
    "IPNetwork",
    "NetGuard",
    "Outage",
    "Outcome",
    "Settings",
    "StepContext",
    "app_items",
    "budget_usage",
    "build_event_request",
    "build_test_request",
    "cancel_requested",
    "clear_active",
    "close_window",
    "default_root",
    "dig",
    "ensure_streams",
    "events_consumer_config",
    "execute",
    "get_active",
    "guarded_transport",
    "hook_error",
    "is_expired",
    "items_at",
    "join_merge",
    "last_capture",
    "list_active",
    "load_catalogue",
    "load_manifest",
    "mark_active",
    "nats_callbacks",
    "open_window",
    "origin_of",
    "parse_body",
    "parse_networks",
    "picked",
    "publish_event",
    "publish_run",
    "remember_account",
    "request_cancel",
    "run_state_buckets",
    "run_step",
    "secret_values",
    "send_outbound",
    "setup_tracing",
    "step_result",
    "stream_configs",
    "tracer",
    "wake_waiting",
]
