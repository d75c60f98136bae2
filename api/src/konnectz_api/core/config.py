"""One typed settings object for the api, read from ``KONNECTZ_*`` environment variables."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from konnectz_contracts.broker_token import derived_key
from konnectz_contracts.events import NATS_REPLICAS, NatsReplicas
from konnectz_runner.apps import IPNetwork, parse_networks

#: A Kubernetes namespace name (an RFC 1123 label).
NAMESPACE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DEV_SECRET = "dev-insecure-secret-change-me"  # noqa: S105 - refused outside dev/test


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KONNECTZ_", extra="ignore")

    env: Literal["dev", "test", "production"] = "dev"
    database_url: str = "postgresql+psycopg://postgres@127.0.0.1:15432/konnectz"
    nats_url: str = "nats://127.0.0.1:14222"
    # The api's NATS user (konnectz_contracts.nats_auth); empty: no credentials (NATS without authorization).
    nats_user: str = ""
    nats_password: str = Field(default="", repr=False)
    # CA bundle to verify a tls:// NATS with (empty: the system's CAs).
    nats_ca_file: str = ""
    # Servers keeping a copy of every stream and bucket (konnectz_contracts.events.NatsReplicas; the chart's
    # nats.replicas): the api creates them with it at start and brings existing ones to it.
    nats_replicas: NatsReplicas = NATS_REPLICAS
    secret_key: str = DEV_SECRET
    encryption_key: str = DEV_SECRET
    # Key of the tokens runners show the credential broker (konnectz_contracts.broker_token); empty:
    # derived one-way from secret_key.
    credentials_key: str = ""
    public_url: str = "http://127.0.0.1:8080"
    webhook_base_url: str = "http://127.0.0.1:8081"

    access_token_minutes: int = Field(default=12 * 60, ge=1)
    remember_me_days: int = Field(default=30, ge=1)
    verification_token_hours: int = Field(default=48, ge=1)
    reset_token_minutes: int = Field(default=60, ge=1)
    # Sign-in throttling: failed attempts allowed per window, per e-mail and per client address.
    login_window_seconds: int = Field(default=900, ge=1)
    login_max_failures_per_email: int = Field(default=5, ge=1)
    login_max_failures_per_address: int = Field(default=30, ge=1)
    # Password-reset and verification mails allowed per window, per e-mail address and per client address.
    mail_window_seconds: int = Field(default=3600, ge=1)
    mail_max_per_email: int = Field(default=5, ge=1)
    mail_max_per_address: int = Field(default=30, ge=1)

    smtp_host: str = "127.0.0.1"
    smtp_port: int = 1025
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = False
    mail_from: str = "Konnectz <no-reply@konnectz.local>"
    dev_maildir: Path | None = None

    captcha_cost: int = Field(default=500, ge=1)
    captcha_max_number: int = Field(default=10000, ge=10)
    captcha_ttl_seconds: int = Field(default=600, ge=10)

    # Avatar uploads: the largest file accepted (bytes); images are re-encoded to at most 512x512 PNG.
    avatar_max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)

    # The AI host (a Flowise server) behind /chatflows, /agentflows and /tools: unset = not configured.
    ai_host_url: str | None = None
    # Shared with the AI host: signs the short-lived authToken appended to its frame URLs (never the
    # session token). Required when ai_host_url is set.
    ai_host_secret: str | None = None
    ai_token_minutes: int = Field(default=60, ge=1)
    ai_chatflows_path: str = "/chatflows"
    ai_agentflows_path: str = "/agentflows"
    ai_tools_path: str = "/tools"
    ai_home_path: str = "/"

    web_dist: Path | None = None
    # The app catalogue (manifests): defaults to catalogue/ of the source tree.
    catalogue_dir: Path | None = None
    # Earlier credential encryption keys, still read after a rotation (comma-separated).
    old_encryption_keys: str = ""
    # OAuth2 clients per app key, as JSON: {"slack": {"client_id": "...", "client_secret": "..."}}.
    oauth_clients: dict[str, dict[str, str]] = Field(default_factory=dict)
    oauth_state_minutes: int = Field(default=15, ge=1)
    # Administrators (assign plans, enter OAuth apps in the UI), named by the installer: the users whose
    # verified e-mail is on this comma-separated list (case-insensitive), besides those granted with
    # `python -m konnectz_api admin grant EMAIL`. Never inferred (konnectz_api.crud.admins).
    admin_emails: Annotated[frozenset[str], NoDecode] = Field(default_factory=frozenset)
    # Namespaces bound to Konnectz accounts by the installer (the chart's namespaceBindings), applied at
    # start: `team-a=a@example.com,team-b=b@example.com`. A Konnect applied with kubectl is imported only
    # from a bound namespace, for the account's owner or a member who may publish; administrators bind
    # more with `python -m konnectz_api namespace bind` (konnectz_api.crud.namespace_bindings).
    namespace_bindings: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    outbound_timeout_seconds: float = Field(default=20, gt=0)
    deployer: Literal["local", "kubernetes"] = "local"
    # Task logs: a run's data, or one step's, larger than this (bytes of JSON) is kept in task_payloads
    # instead of inline, and purged from there after task_payload_retention_days (0 = kept for ever).
    task_payload_inline_bytes: int = Field(default=64 * 1024, ge=1024)
    task_payload_retention_days: int = Field(default=30, ge=0)
    task_payload_purge_interval_seconds: float = Field(default=3600, gt=0)
    # Accepted requests (the trigger's data of each task log, what a replay sends again) are kept this
    # many days after their run finished, then replaced by a stub (0 = kept as long as the task log).
    # The same job, every task_payload_purge_interval_seconds, purges them (konnectz_api.crud.requests).
    request_retention_days: int = Field(default=30, ge=0)
    # revisions: each konnect keeps its newest this many published revisions (never deleting the live
    # one); 0 keeps every revision (docs/revisions.md).
    revisions_keep: int = Field(default=0, ge=0, le=1_000_000)
    # The task-event consumer stores up to this many events per transaction.
    task_events_batch: int = Field(default=500, ge=1, le=10_000)
    kube_namespace: str = "konnectz"
    # The cluster sync's watch of Konnects ends and is opened again every this many seconds; between two,
    # the Konnects refused for their namespace's binding or their owner are examined again (cluster_sync).
    kube_watch_seconds: int = Field(default=30, ge=1, le=3600)
    # Where published konnects run on Kubernetes: a runner workload each (dedicated) or the
    # shared runner pool (shared); see docs/kubernetes.md.
    runner_mode: Literal["dedicated", "shared"] = "dedicated"

    # Test & Review runs one step in the api through the runner's step code and outbound guard:
    # the same private networks the runners may call (KONNECTZ_ALLOW_PRIVATE_NETWORKS).
    allow_private_networks: Annotated[list[IPNetwork], NoDecode] = Field(default_factory=list)
    test_timeout_seconds: float = Field(default=20.0, gt=0, le=120)
    test_max_response_bytes: int = Field(default=1024 * 1024, gt=0)
    # Request bodies larger than this are refused with 413 (limits.BodyLimitMiddleware).
    max_request_bytes: int = Field(default=2 * 1024 * 1024, gt=0)

    # Every wait has a bound (docs/concurrency.md). PostgreSQL, per connection of the api: a row
    # or table lock waited for longer than db_lock_timeout_ms, a statement running longer than
    # db_statement_timeout_ms, a transaction left idle longer than db_idle_in_transaction_timeout_ms
    # end it (503 with Retry-After; the idle one's connection is closed by the server).
    db_lock_timeout_ms: int = Field(default=3_000, ge=100, le=600_000)
    db_statement_timeout_ms: int = Field(default=15_000, ge=100, le=3_600_000)
    db_idle_in_transaction_timeout_ms: int = Field(default=30_000, ge=1_000, le=3_600_000)
    # Seconds a request waits for a connection of the api's pools before its 503.
    db_pool_timeout_seconds: float = Field(default=5.0, gt=0, le=120)
    # A request's reply is due within this many seconds (Test & Review's own limit is below it); after
    # it the client gets a 503 with Retry-After and the work still running is logged once.
    request_deadline_seconds: float = Field(default=60.0, gt=0, le=3600)
    # Threads of the api process's pool (sync routes and database work): more wait for one, on the loop.
    api_threads: int = Field(default=40, ge=1, le=1000)
    # Write calls of one account at once in one api process; more answer 429 with Retry-After.
    account_concurrent_writes: int = Field(default=8, ge=1, le=1000)
    # The guard on synchronous database calls made on the event loop (konnectz_api.core.loopguard).
    loop_guard: Literal["off", "log", "raise"] = "log"

    @field_validator("allow_private_networks", mode="before")
    @classmethod
    def _split_cidrs(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_networks(value)
        return value

    @field_validator("admin_emails", mode="before")
    @classmethod
    def _split_emails(cls, value: Any) -> Any:
        items = value.split(",") if isinstance(value, str) else value
        return frozenset(str(item).strip().lower() for item in items if str(item).strip())

    @field_validator("namespace_bindings", mode="before")
    @classmethod
    def _split_bindings(cls, value: Any) -> Any:
        pairs = value.items() if isinstance(value, dict) else (p.partition("=")[::2] for p in str(value).split(","))
        found: dict[str, str] = {}
        for raw_namespace, raw_email in pairs:
            namespace, email = str(raw_namespace).strip(), str(raw_email).strip()
            if not namespace and not email:
                continue
            if not NAMESPACE_NAME.match(namespace) or "@" not in email:
                raise ValueError(f"{namespace}={email} is not <namespace>=<owner-email>")
            found[namespace] = email
        return found

    @model_validator(mode="after")
    def _refuse_insecure_defaults(self) -> Settings:
        if self.request_deadline_seconds <= self.test_timeout_seconds + 5:
            raise ValueError(
                "KONNECTZ_REQUEST_DEADLINE_SECONDS must exceed KONNECTZ_TEST_TIMEOUT_SECONDS + 5 (a test's own limit)"
            )
        if self.ai_host_url and (not self.ai_host_secret or len(self.ai_host_secret) < 32):
            raise ValueError("KONNECTZ_AI_HOST_SECRET (at least 32 characters) must be set with KONNECTZ_AI_HOST_URL")
        if self.env == "production":
            for name in ("secret_key", "encryption_key"):
                value = getattr(self, name)
                if value == DEV_SECRET or len(value) < 32:
                    raise ValueError(
                        f"KONNECTZ_{name.upper()} must be set to a random value of at least 32 characters in production"
                    )
        return self

    @property
    def runner_credentials_key(self) -> str:
        return self.credentials_key or derived_key(self.secret_key)

    @property
    def is_dev(self) -> bool:
        return self.env in ("dev", "test")


@lru_cache
def get_settings() -> Settings:
    return Settings()
