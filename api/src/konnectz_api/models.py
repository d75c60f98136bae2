"""SQLAlchemy 2 models: the api's persistent state."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from konnectz_api.compile.plan import konnect_app_names

JsonType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True, index=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    first_name: Mapped[str] = mapped_column(String(100), default="")
    last_name: Mapped[str] = mapped_column(String(100), default="")
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    email_verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    verification_digest: Mapped[str | None] = mapped_column(String(64), index=True)
    verification_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Password reset: only the SHA-256 digest of the single-use token is stored.
    reset_password_digest: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    reset_password_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # When sessions were last ended (password change or reset); kept as a record.
    tokens_valid_after: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Every access token carries the version it was issued under (claim ``sv``); a password change or reset
    # increments it, so every token issued before (however close in time) is refused.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    current_plan: Mapped[str] = mapped_column(String(50), default="Free")
    preferred_language: Mapped[str] = mapped_column(String(10), default="en")
    country: Mapped[str | None] = mapped_column(String(100))
    timezone: Mapped[str | None] = mapped_column(String(64))
    image_url: Mapped[str | None] = mapped_column(Text)
    task_limit: Mapped[int] = mapped_column(Integer, default=1000)
    # Executed actions of the owner's runs, debited once per run by the task-event consumer.
    task_consumed: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Members (konnectz_api.crud.members): the account that added this user, and how.
    # "team": signs in with own credentials and works in the parent's account with ``access``;
    # "agency"/"reseller": a sub-account with its own data and its own task quota (task_limit).
    parent_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    member_kind: Mapped[str | None] = mapped_column(String(20))
    access: Mapped[str | None] = mapped_column(String(20))


class QuotaReservation(Base):
    """Tasks a run reserved before it executed (the runner asks over NATS); settled by its task event."""

    __tablename__ = "quota_reservations"

    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    tasks: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuditEntry(Base):
    """A change a team member made in the account they work in: who, what, when, from where."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    account_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    actor_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="SET NULL"))
    actor_email: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(400))
    outcome: Mapped[str] = mapped_column(String(20))
    address: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class Avatar(Base):
    """A user's profile picture, re-encoded as PNG; served without sign-in at an unguessable path."""

    __tablename__ = "avatars"

    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    token: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AppAccount(Base):
    """A user's connected account of a catalogue app. ``credentials`` is encrypted (core.crypto)."""

    __tablename__ = "app_accounts"
    __table_args__ = (
        Index("ix_app_accounts_owner_app", "owner_id", "app_id"),
        CheckConstraint(
            "rate_limit_rps IS NULL OR (rate_limit_rps >= 0.01 AND rate_limit_rps <= 1000)",
            name="ck_app_accounts_rate_limit_rps",
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    app_id: Mapped[int] = mapped_column(Integer)  # the manifest's id
    app_key: Mapped[str] = mapped_column(String(100))
    label: Mapped[str] = mapped_column(String(255))
    credentials: Mapped[str] = mapped_column(Text)
    token_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    # rate budgets: the owner's override of the app's requests per second (NULL: the app's own rate).
    rate_limit_rps: Mapped[float | None] = mapped_column(Float, nullable=True)


class OAuthClientConfig(Base):
    """An OAuth app (client id and secret) an administrator entered for a catalogue app, by app key.

    ``client_secret`` is sealed with the credential cipher (core.crypto) and never returned.
    ``KONNECTZ_OAUTH_CLIENTS`` wins over a row for the same app (konnectz_api.crud.oauth_clients).
    """

    __tablename__ = "oauth_clients"

    app_key: Mapped[str] = mapped_column(String(100), primary_key=True)
    client_id: Mapped[str] = mapped_column(Text)
    client_secret: Mapped[str] = mapped_column(Text)
    updated_by: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="SET NULL"))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class NamespaceBinding(Base):
    """A Kubernetes namespace bound by an administrator to a Konnectz account (its owner user): the
    Konnects applied there with kubectl or GitOps are imported as that account's flows, for its owner or
    a member who may publish (konnectz_api.crud.namespace_bindings). ``source``: ``administrator`` (the
    CLI or the admin API) or ``environment`` (``KONNECTZ_NAMESPACE_BINDINGS``, the chart's value)."""

    __tablename__ = "namespace_bindings"
    __table_args__ = (
        CheckConstraint("source IN ('administrator', 'environment')", name="ck_namespace_bindings_source"),
    )

    namespace: Mapped[str] = mapped_column(String(63), primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(20), default="administrator")
    bound_by: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="SET NULL"))
    bound_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class McpToken(Base):
    """A token an MCP client sends to ``/mcp`` (``Authorization: Bearer kzmcp_…``): it belongs to an
    account and reaches only the flows it names (``konnect_ids``) that offer themselves as tools. Only
    its SHA-256 is kept; the token is shown once, when made. Revoked tokens stay listed, refused
    (konnectz_api.crud.mcp_tokens)."""

    __tablename__ = "mcp_tokens"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="SET NULL"))
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    konnect_ids: Mapped[list[int]] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class AppWebhookSubscription(Base):
    """A published konnect's app webhook trigger: the app's subscription (``external_id``, the rest of
    its reply in ``state``) and the signing secret deliveries are verified with (encrypted)."""

    __tablename__ = "app_webhook_subscriptions"

    konnect_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("konnects.id", ondelete="CASCADE"), primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    app_id: Mapped[int] = mapped_column(Integer)
    account_id: Mapped[int | None] = mapped_column(BigInteger)
    event: Mapped[str] = mapped_column(String(100))
    external_id: Mapped[str | None] = mapped_column(Text)
    secret: Mapped[str] = mapped_column(Text)
    state: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class OAuthState(Base):
    """A pending OAuth2 authorisation: the signed state's nonce, its PKCE verifier (encrypted)."""

    __tablename__ = "oauth_states"

    nonce: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    app_id: Mapped[int] = mapped_column(Integer)
    app_account_id: Mapped[int | None] = mapped_column(BigInteger)  # re-authorising an account
    redirect_url: Mapped[str] = mapped_column(Text)
    verifier: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Folder(Base):
    """A user's folder of flows. Removing it returns its flows to Home (konnects.folder_id NULL)."""

    __tablename__ = "folders"
    __table_args__ = (Index("ix_folders_owner_id", "owner_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Konnect(Base):
    __tablename__ = "konnects"
    __table_args__ = (
        Index("ix_konnects_owner_created", "owner_id", "created_at", "id"),
        Index("ix_konnects_owner_folder_created", "owner_id", "folder_id", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    konnect_name: Mapped[str] = mapped_column(String(255), default="")
    folder_id: Mapped[int | None] = mapped_column(ForeignKey("folders.id", ondelete="SET NULL"), index=True)
    status: Mapped[str] = mapped_column(String(20), default="Draft")
    canvas_json: Mapped[dict[str, Any]] = mapped_column(JsonType)
    # {"left": trigger app name or None, "right": [action app names in run order]}: what the flow
    # list and the history show of canvas_json, derived whenever canvas_json is set (below), so the
    # lists never load and parse whole canvases. NULL on rows written without the ORM (readers then
    # derive it from canvas_json).
    app_names: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    webhook_token: Mapped[str] = mapped_column(String(64), unique=True)
    published_spec: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A Published flow whose canvas_json was saved since it was published: the saved changes are a
    # pending draft beside the live version (published_spec keeps running until Publish).
    draft_pending: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    # revisions: the number of the konnect_revisions row now running (NULL: never published since
    # revisions exist, or withdrawn).
    live_revision: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Kubernetes deployer: the UID of the Konnect resource the api created (publish) or imported for
    # this flow. The cluster sync follows only that resource and the credential broker accepts only
    # tokens bound to it (docs/security.md). NULL: none yet, or the local deployer.
    resource_uid: Mapped[str | None] = mapped_column(String(64), nullable=True)


@event.listens_for(Konnect.canvas_json, "set")
def _derive_app_names(target: Konnect, value: Any, _old: Any, _initiator: Any) -> None:
    target.app_names = konnect_app_names(value)


class KonnectRevision(Base):
    """One successful publish of a konnect, kept unchanged: the canvas and the flow spec that went live.

    ``number`` counts 1, 2, 3... per konnect; a restore publishes an old revision's canvas again as a
    new revision (``restored_from``). Retention (``KONNECTZ_REVISIONS_KEEP``) may delete old ones,
    never the live one.
    """

    __tablename__ = "konnect_revisions"
    __table_args__ = (UniqueConstraint("konnect_id", "number", name="uq_konnect_revisions_konnect_number"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    konnect_id: Mapped[int] = mapped_column(ForeignKey("konnects.id", ondelete="CASCADE"))
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    canvas_json: Mapped[dict[str, Any]] = mapped_column(JsonType)
    spec: Mapped[dict[str, Any]] = mapped_column(JsonType)
    message: Mapped[str] = mapped_column(String(500), default="", server_default="")
    published_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    published_by_email: Mapped[str] = mapped_column(String(320), default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    restored_from: Mapped[int | None] = mapped_column(Integer, nullable=True)


class KonnectActivity(Base):
    """The Test & Review result of one node of a konnect (its ``konnect_activity_id``).

    One row per (konnect, node): testing again replaces the result. Action tests read the
    outputs of their upstream nodes from here; the trigger's row is what a test of the trigger or
    a webhook capture produced.
    """

    __tablename__ = "konnect_activities"
    __table_args__ = (UniqueConstraint("konnect_id", "node_id", name="uq_konnect_activities_konnect_node"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    konnect_id: Mapped[int] = mapped_column(ForeignKey("konnects.id", ondelete="CASCADE"))
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    node_id: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(50))
    app_name: Mapped[str] = mapped_column(String(200), default="")
    status: Mapped[str] = mapped_column(String(10))
    display_message: Mapped[str] = mapped_column(Text, default="")
    input: Mapped[dict[str, Any]] = mapped_column(JsonType)
    output: Mapped[Any] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class TaskLog(Base):
    """One run of a konnect (one accepted trigger), persisted from its task event."""

    __tablename__ = "task_logs"
    __table_args__ = (
        Index("ix_task_logs_owner_konnect_date", "owner_id", "konnect_id", "task_date"),
        Index("ix_task_logs_owner_konnect_status_date", "owner_id", "konnect_id", "status", "task_date", "id"),
        Index("ix_task_logs_owner_date", "owner_id", "task_date", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    run_id: Mapped[str] = mapped_column(String(64), unique=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    konnect_id: Mapped[int] = mapped_column(ForeignKey("konnects.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(10))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    task_date: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)
    # The OpenTelemetry trace of the run (32 hex digits), when the runner traced it.
    trace_id: Mapped[str | None] = mapped_column(String(32))
    # Deliveries of the run to a worker before it finished (1 = first try; more after a runner died).
    attempts: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The run_id of the run this one replays (POST /api/v1/task_logs/{id}/replay).
    replay_of: Mapped[str | None] = mapped_column(String(64), index=True)
    # The run_id of the latest replay of this run and how many were asked for: a second replay answers it.
    replayed_as: Mapped[str | None] = mapped_column(String(64))
    replays: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # revisions: the konnect revision the run executed (NULL: a run of a spec without revision).
    revision: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # run control: who cancelled the run (the user's e-mail) when its status is CANCELLED.
    cancelled_by: Mapped[str | None] = mapped_column(String(320))
    # call a flow: the run that called this one ({konnect_id, konnect_name, run_id, step_id}), and the runs
    # this one's Call a Flow steps started ([{step_id, run_id, flow_id, flow_name}]).
    called_by: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JsonType, nullable=True)

    tasks: Mapped[list[Task]] = relationship(
        back_populates="task_log", order_by="Task.position", cascade="all, delete-orphan"
    )


class Task(Base):
    """One step of a run."""

    __tablename__ = "tasks"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    task_log_id: Mapped[int] = mapped_column(ForeignKey("task_logs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    step_id: Mapped[str] = mapped_column(String(100))
    app_name: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(10))
    #: When the step started (NULL for tasks stored before migration 0015); task_date is when it ended.
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    task_date: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)

    task_log: Mapped[TaskLog] = relationship(back_populates="tasks")


class TaskPayload(Base):
    """A task-log payload larger than the inline threshold, kept apart so task_logs and tasks stay small.

    ``position`` -1 is the task log's own data (trigger data and step outputs), 0.. the task at that
    position. The inline row keeps a stub (:mod:`konnectz_api.crud.task_payloads`); rows older than
    the retention setting are purged.
    """

    __tablename__ = "task_payloads"

    task_log_id: Mapped[int] = mapped_column(ForeignKey("task_logs.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)


class CaptchaUse(Base):
    """Signatures of solved captchas, so one solution cannot be replayed."""

    __tablename__ = "captcha_uses"

    signature: Mapped[str] = mapped_column(String(128), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class RevokedToken(Base):
    """Access tokens ended by logout (by their jti) until they would have expired anyway."""

    __tablename__ = "revoked_tokens"

    jti: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class LoginThrottle(Base):
    """Failed sign-ins per client address and per e-mail (digest) in a fixed window."""

    __tablename__ = "login_throttle"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    failures: Mapped[int] = mapped_column(Integer)


class RetentionCursor(Base):
    """Where a retention job stopped (the last id it passed), shared by every api process: a restart
    reads on from there instead of walking the table again, and a pass locks the row (``FOR UPDATE
    SKIP LOCKED``), so two processes never walk the same batch."""

    __tablename__ = "retention_cursors"

    job: Mapped[str] = mapped_column(String(40), primary_key=True)
    after_id: Mapped[int] = mapped_column(BigInteger, default=0)


class FailureAlertState(Base):
    """A flow's failure-alert digest (run control): when its last alert went out and how many failures
    came since without one. At most one alert per flow per ``digest_minutes``
    (:mod:`konnectz_api.services.failure_alerts`)."""

    __tablename__ = "failure_alerts"

    konnect_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("konnects.id", ondelete="CASCADE"), primary_key=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, index=True)
    last_alert_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: Failures since the last alert that got none (named in the next one).
    pending: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    pending_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Approval(Base):
    """An Approval step waiting for a decision (docs/waits.md): whom it asks, until when, and who decided.
    The decision itself is taken in NATS (the run's wait in ``KZ_WAITS``, decided once); this row is the
    pending list and the e-mailed links' record (:mod:`konnectz_api.routes.approvals`)."""

    __tablename__ = "approvals"
    __table_args__ = (UniqueConstraint("run_id", "step_id", name="uq_approvals_run_step"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    konnect_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("konnects.id", ondelete="CASCADE"), index=True)
    owner_id: Mapped[int] = mapped_column(BigInteger, index=True)
    run_id: Mapped[str] = mapped_column(String(64))
    step_id: Mapped[str] = mapped_column(String(100))
    approvers: Mapped[list[str]] = mapped_column(JSONB)
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    until: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decision: Mapped[str | None] = mapped_column(String(20))
    decided_by: Mapped[str | None] = mapped_column(String(320))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AgentMemory(Base):
    """One turn of an AI Agent step's conversation (docs/ai.md): the prompt, the tool calls and their
    results, and the answer, as chat messages. A conversation is (konnect, ``conversation``: the sha256 of
    the resolved conversation key), so a runner reads only its own konnect's (and owner's); the oldest
    whole turns are dropped past the bounds (:mod:`konnectz_api.routes.agent_memory`)."""

    __tablename__ = "agent_memory"
    __table_args__ = (
        UniqueConstraint("konnect_id", "turn_key", name="uq_agent_memory_turn"),
        Index("ix_agent_memory_conversation", "konnect_id", "conversation", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    konnect_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("konnects.id", ondelete="CASCADE"))
    owner_id: Mapped[int] = mapped_column(BigInteger, index=True)
    conversation: Mapped[str] = mapped_column(String(64))
    turn_key: Mapped[str] = mapped_column(String(64))
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class EvaluationSet(Base):
    """A flow's evaluations (docs/ai.md): example inputs with the checks their outputs must pass.

    One row per konnect. ``cases`` is the list validated by the api's schema (name, input, checks);
    ``running_until`` is the lease of a run in progress (the per-account bound counts the unexpired ones,
    so a run whose process died frees its place when the lease ends); ``last_run`` the summary of the
    last finished run (score, passed, total, revision, when).
    """

    __tablename__ = "evaluation_sets"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    konnect_id: Mapped[int] = mapped_column(ForeignKey("konnects.id", ondelete="CASCADE"), unique=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    cases: Mapped[list[Any]] = mapped_column(JsonType)
    threshold: Mapped[float] = mapped_column(Float, default=1.0, server_default="1")
    stop_before_effects: Mapped[bool] = mapped_column(Boolean, default=False, server_default="false")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    running_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_run: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
