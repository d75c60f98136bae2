"""Runner settings, read from ``KONNECTZ_*`` environment variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from konnectz_contracts.events import NATS_REPLICAS, NatsReplicas
from konnectz_contracts.limits import FORM_MAX_BYTES, RUN_MAX_BYTES, WEBHOOK_MAX_BYTES
from konnectz_runner.apps import IPNetwork, parse_networks

__all__ = ["MAX_AUTO_PROCESSES", "Settings", "auto_processes"]

#: ``KONNECTZ_RUNNER_PROCESSES=auto`` starts one process per core, at most this many (each process
#: holds every konnect, so memory grows with the count; beyond 8 the stores are the bottleneck).
MAX_AUTO_PROCESSES = 8


def auto_processes() -> int:
    """One runner process per core this process may run on, between 1 and :data:`MAX_AUTO_PROCESSES`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_PROCESSES))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KONNECTZ_", extra="ignore")

    nats_url: str = "nats://127.0.0.1:4222"
    # The runner's NATS user (konnectz_contracts.nats_auth): the chart's Secret, the devstack's
    # generated password. Empty: connect without credentials (a NATS without authorization).
    nats_user: str = ""
    nats_password: str = Field(default="", repr=False)
    # CA bundle to verify a tls:// NATS with (empty: the system's CAs).
    nats_ca_file: str = ""
    # Servers keeping a copy of every stream and bucket (konnectz_contracts.events.NatsReplicas; the chart's
    # nats.replicas): the runner creates its streams and buckets with it and brings existing ones to it.
    nats_replicas: NatsReplicas = NATS_REPLICAS
    runner_host: str = "127.0.0.1"
    runner_port: int = Field(default=8081, ge=0, le=65535)
    # Networks flows may call although they are private, e.g. "127.0.0.0/8,10.1.0.0/16".
    allow_private_networks: Annotated[list[IPNetwork], NoDecode] = Field(default_factory=list)
    # Kubernetes mode: the operator mounts one FlowSpec JSON; the runner then serves only that
    # konnect, consumes only its runs, and does not watch the KZ_KONNECTS bucket.
    spec_file: Path | None = None
    # ... and the URL token of its webhook or form trigger (from the Konnect's Secret; not in the file).
    trigger_token: str = Field(default="", repr=False)
    # Kubernetes shared pool: serve every konnect of the KZ_KONNECTS bucket (which the operator fills
    # with the Konnects of runnerMode shared) and consume only their runs (``kz.runs.pool.>``).
    pool: bool = False
    http_timeout_seconds: float = Field(default=30.0, gt=0)
    # Bodies of webhooks, app webhooks and captures, and of hosted forms (413 beyond); both below what
    # a stored run may hold (konnectz_contracts.limits).
    max_body_bytes: int = Field(default=WEBHOOK_MAX_BYTES, gt=0, le=RUN_MAX_BYTES)
    max_form_bytes: int = Field(default=FORM_MAX_BYTES, gt=0, le=RUN_MAX_BYTES)
    # Runs executed at the same time by one runner process.
    worker_concurrency: int = Field(default=256, ge=1)
    # Reserve each run's tasks with the api (NATS request-reply) before executing it; a run over its
    # owner's quota is refused with an ERROR task log. Off only for a runner used without an api.
    enforce_quota: bool = True
    quota_timeout_seconds: float = Field(default=5.0, gt=0)
    # Back-pressure: when more accepted runs than this wait or run (the KZ_RUNS consumer's pending and
    # unacknowledged messages), triggers are answered 429 with Retry-After instead of being queued.
    max_queued_runs: int = Field(default=1_000, ge=1)
    # ... and not more than this many seconds of work at the rate runs currently finish (0: only the
    # fixed bound), so the backlog left when a burst ends drains within about this time.
    max_queue_seconds: float = Field(default=1.5, ge=0)
    retry_after_seconds: int = Field(default=2, ge=1)
    # A refused (429) request is answered after this pause: a sender that retries at once, in a loop,
    # cannot then spend on its refusals the CPU the accepted runs need (thousands of 429s a second
    # otherwise take most of the ingress's time). Senders that honour Retry-After never notice.
    refuse_delay_seconds: float = Field(default=0.1, ge=0, le=5)
    # Execute runs on their own event loop (a thread with its own NATS connection), so webhook ingress
    # under load cannot crowd execution out.
    worker_thread: bool = True
    # How often Python hands the GIL between the ingress loop and the worker thread (sys.setswitchinterval).
    # Python's 5 ms default lets a busy worker hold a webhook's acknowledgement back for 5 ms at each of
    # its awaits; 1 ms keeps the acknowledgement's tail short (see docs/performance.md).
    switch_interval_seconds: float = Field(default=0.001, gt=0, le=0.1)
    # One log line per webhook request (uvicorn's access log); off by default, it is costly under load.
    access_log: bool = False
    # How long startup waits for the KZ_KONNECTS bucket to be loaded (100,000 konnects take seconds).
    kv_ready_timeout_seconds: float = Field(default=120.0, gt=0)
    # A step with effects whose runner died while it ran: "fail" ends it as an ERROR without running
    # it again (at most once), "retry" runs it again (at least once). See konnectz_runner.engine.journal.
    in_doubt_steps: Literal["fail", "retry"] = "fail"
    # Poll each polling konnect at least this often (tests and local trials); default: each trigger's
    # own interval (a catalogue trigger's manifest says, 300 s unless it says otherwise).
    max_poll_interval_seconds: float | None = Field(default=None, gt=0)
    # The transport under the steps' httpx client: "aiohttp" (its connection pool and C parser, about
    # a third of the runner's CPU cheaper under load) or "httpx" (httpcore). Both apply the same guard.
    http_client: Literal["aiohttp", "httpx"] = "aiohttp"
    # Runner processes sharing the listening socket (konnectz_runner.processes): one interpreter uses
    # at most one core, so a runner with N processes can use N. Each process holds every konnect.
    # "auto": one per core, at most MAX_AUTO_PROCESSES (what ``make dev`` starts unless told otherwise).
    runner_processes: int = Field(default=1, ge=1, le=64)
    # Whether this process runs the runner's single duties (schedules, polling); set by the parent of
    # a multi-process runner for all its children but the first.
    runner_primary: bool = True

    @field_validator("runner_processes", mode="before")
    @classmethod
    def _auto_processes(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() == "auto":
            return auto_processes()
        return value

    @field_validator("allow_private_networks", mode="before")
    @classmethod
    def _split_cidrs(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_networks(value)
        return value
