"""Request and reply schemas (the HTTP contract the SPA's types are generated from)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, EmailStr, Field, GetJsonSchemaHandler, field_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from konnectz_api.compile.live_trigger import TriggerKind
from konnectz_api.step_secrets import MASK, SecretName, SecretNamePart
from konnectz_api.task_status import TaskLogStatus
from konnectz_contracts.canvas import Canvas
from konnectz_contracts.run_control import ActiveStatus

PASSWORD_MIN = 8


class Message(BaseModel):
    message: str


class KeyReply(BaseModel):
    key: str
    message: str


# --- auth ---------------------------------------------------------------------------------
class EmailIn(BaseModel):
    email: EmailStr


class SignupIn(BaseModel):
    email: EmailStr
    first_name: str = Field(min_length=1, max_length=100)
    last_name: str = Field(default="", max_length=100)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str
    is_admin: bool = False

    @field_validator("first_name", "last_name")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        if any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


class EmailConfirmationIn(BaseModel):
    confirmation_token: str = Field(min_length=1, max_length=200)


class ResetPasswordIn(BaseModel):
    reset_password_token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str = Field(max_length=200)


class ProfileUpdate(BaseModel):
    """The fields a user may change. Everything else the SPA sends back (is_admin, current_plan,
    free_task, the payment customer id, preferred_language, image_url, email, id) is ignored."""

    model_config = ConfigDict(extra="ignore")

    first_name: str | None = Field(default=None, min_length=1, max_length=100)
    last_name: str | None = Field(default=None, max_length=100)
    country: str | None = Field(default=None, max_length=100, description="ISO 3166-1 alpha-2 code, e.g. DE")
    timezone: str | None = Field(
        default=None,
        max_length=64,
        description="A GMT offset GMT+HH:MM or GMT-HH:MM (hours 00-14, minutes 00, 15, 30 or 45), e.g. GMT+05:30, "
        "or an IANA time zone of the options, e.g. Europe/Berlin; anything else is a 422 that says why",
    )

    @field_validator("first_name", "last_name", "country", "timezone")
    @classmethod
    def _no_control_characters(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value


class ChangePasswordIn(BaseModel):
    current_password: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=PASSWORD_MIN, max_length=200)
    password_confirmation: str = Field(max_length=200)


class CountryOption(BaseModel):
    value: str
    label: str


class TimezoneOption(BaseModel):
    value: str
    label: str
    offset_minutes: int


class ProfileOptions(BaseModel):
    countries: list[CountryOption]
    timezones: list[TimezoneOption]


class LoginIn(BaseModel):
    email: EmailStr
    password: str = Field(min_length=1, max_length=200)
    rememberMe: bool = False
    captcha: str | None = None


class LoginOut(BaseModel):
    auth_token: str
    preferred_language: str
    message: str


class Profile(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    email: str
    first_name: str
    last_name: str
    image_url: str | None
    current_plan: str
    country: str | None
    timezone: str | None
    preferred_language: str
    is_admin: bool = Field(
        description="An administrator: named by the installer (KONNECTZ_ADMIN_EMAILS, or granted with "
        "`python -m konnectz_api admin grant`), e-mail verified"
    )


# --- apps ---------------------------------------------------------------------------------
class AppOut(BaseModel):
    id: int
    name: str
    image_url: str | None
    status: str = Field(description="Active or Beta")
    account_count: int = Field(default=0, description="The caller's linked accounts of this app")
    provider: str = Field(description="The app's key")
    app_type: str = Field(description="api, ADD_ON or WEBHOOK")
    auth_type: str | None = Field(description="OAuth2 (popup), Token (fields) or null (no account)")
    categories: list[str] = Field(default_factory=list)


class AppList(BaseModel):
    apps: list[AppOut]
    total_apps: int


# --- folders ------------------------------------------------------------------------------
ReplyStatus = Literal["SUCCESS", "FAILURE"]


class FolderNameIn(BaseModel):
    folder_name: str = Field(min_length=1, max_length=100, description="1 to 100 characters, trimmed")

    @field_validator("folder_name")
    @classmethod
    def _clean(cls, value: str) -> str:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("must not contain control characters")
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value


class FolderOut(BaseModel):
    id: int
    name: str
    konnect_count: int = Field(description="Flows in the folder (deleted flows not counted)")


class FolderList(BaseModel):
    status: ReplyStatus = "SUCCESS"
    message: str = "SUCCESS"
    folders: list[FolderOut]


class FolderReply(BaseModel):
    status: ReplyStatus
    message: str
    folder: FolderOut | None = None


class AssignIn(BaseModel):
    konnects: str = Field(
        min_length=1,
        max_length=20_000,
        pattern=r"^\s*\d{1,19}\s*(,\s*\d{1,19}\s*)*$",
        description="Comma-separated konnect ids, e.g. `12,15,19` (at most 1000)",
        examples=["12,15,19"],
    )


class AssignOut(BaseModel):
    status: ReplyStatus
    message: str
    folder_id: int
    konnects: list[int] = Field(description="The ids now in the folder")


class FolderRemoveOut(BaseModel):
    status: ReplyStatus
    message: str
    folder_id: int
    konnects_moved_home: int = Field(description="How many flows of the folder returned to Home")


class FailureReply(BaseModel):
    status: Literal["FAILURE"] = "FAILURE"
    message: str


class AppEventOut(BaseModel):
    id: str = Field(description="The event key (shown as value)")
    name: str = Field(description="The event label (shown as label)")
    kind: Literal["trigger", "action", "search"]
    side: Literal["left", "right"] = Field(description="left: starts a konnect; right: an action or search")
    help: str = ""


class AppEventList(BaseModel):
    app_events: list[AppEventOut]


class OptionOut(BaseModel):
    id: str = Field(description="The option's value")
    name: str = Field(description="The option's label")


class EventConfigOut(BaseModel):
    """One configuration field of an event."""

    id: str = Field(description="The field key")
    config_key: str
    title: str
    label: str
    key_value_type: str = Field(description="string, text, integer, number, boolean, datetime, select, ...")
    type: Literal["text", "select"] = Field(description="select when options are static or fetched")
    config_key_required: bool
    sequence: int = Field(description=">= 1: chosen in order, each choice loads the next (details call)")
    help: str = ""
    default: Any = None
    options: list[OptionOut] = Field(default_factory=list)
    dynamic: bool = Field(default=False, description="Options come from the details call, through an account")
    depends_on: list[str] = Field(default_factory=list)


class EventConfigList(BaseModel):
    app_event_configurations: list[EventConfigOut]
    fetch_fields: bool = Field(description="The event lists more fields live (fetch-fields)")


class ConfigOptions(BaseModel):
    config_key: str
    options: list[OptionOut]


class FetchedFields(BaseModel):
    fields: list[EventConfigOut]


# --- app accounts -------------------------------------------------------------------------
class RateBudgetOut(BaseModel):
    """An app account's rate budget (docs/rate-budgets.md): its rate, where it comes from, its use."""

    account_id: int
    rate_limit_rps: float | None = Field(description="The owner's override (requests/second); null: the app's own")
    app_rate_rps: float | None = Field(description="The app's own rate (its manifest); null: the app sets none")
    rate_rps: float | None = Field(description="The rate the runners enforce; null: no budget")
    source: Literal["override", "app default", "none"]
    burst: int = Field(description="Requests that may leave at once after an idle time")
    tokens_left: float | None = Field(default=None, description="Requests that may leave now without waiting")
    used_last_minute: int | None = Field(default=None, description="Requests sent in the last 60 seconds")
    live: bool = Field(description="False when the shared budget store (NATS) could not be read")


class RateBudgetIn(BaseModel):
    rate_limit_rps: float | None = Field(
        default=None,
        description="Requests per second for this account, from 0.01 to 1000; null clears it (the app's own rate)",
    )

    @field_validator("rate_limit_rps")
    @classmethod
    def _bounds(cls, value: float | None) -> float | None:
        if value is None:
            return None
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("must be a number of requests per second")
        if not 0.01 <= value <= 1000:
            raise ValueError("must be between 0.01 and 1000 requests per second")
        return round(value, 4)


class AppAccountOut(BaseModel):
    id: int
    name: str = Field(description="The account's label (editable)")
    created_at: datetime
    # rate budgets
    rate_budget: RateBudgetOut | None = Field(default=None, description="The account's rate budget and its use")


class AppAccountList(BaseModel):
    authorized_app_accounts: list[AppAccountOut]


class TokenFieldOut(BaseModel):
    id: str
    name: str = Field(description="Title-cased label")
    instructions: str
    secret: bool
    required: bool


class AuthUrlIn(BaseModel):
    app_id: int = Field(ge=1, lt=2**31)
    redirect_url: str = Field(default="", max_length=2000)
    app_user_id: int | None = Field(default=None, ge=1, lt=2**63, description="Re-authorise this account")
    method: Literal["oauth", "token"] | None = Field(
        default=None, description="token: an OAuth2 app's second method (a pasted token), when its manifest has one"
    )


class AuthUrlOut(BaseModel):
    type: Literal["oauth", "token", "none"]
    auth_url: str | None = Field(description="OAuth2 apps: the provider's consent page (PKCE, signed state)")
    fields: list[TokenFieldOut] = Field(default_factory=list, description="Token apps: the fields to fill")
    instructions: str = ""


class OAuthClientOut(BaseModel):
    """An OAuth2 app's client on this server, as the Manage Accounts drawer shows it (never the secret)."""

    app_id: int
    app_key: str
    configured: bool
    source: Literal["environment", "settings"] | None = Field(
        description="environment: KONNECTZ_OAUTH_CLIENTS (wins, read-only here); settings: entered by an administrator"
    )
    client_id: str | None = Field(description="Shown to those who can configure it only")
    client_secret: str | None = Field(description="The mask when a secret is stored, else null: never the secret")
    redirect_url: str = Field(description="The redirect URL to register with the provider")
    can_configure: bool = Field(
        description="The caller may enter or remove the client: an administrator, named by the installer "
        "(KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant`), never inferred"
    )
    who_can_configure: str = Field(
        description="Who may configure OAuth apps and how one becomes an administrator (the 403's message)"
    )
    token_method: str | None = Field(description="The label of the app's second method (a pasted token), if any")


class OAuthClientIn(BaseModel):
    client_id: str = Field(min_length=1, max_length=500)
    client_secret: str = Field(
        default="", max_length=2000, description="Empty or the mask: keep the stored secret (required the first time)"
    )


class AuthorizationIn(BaseModel):
    app_id: int = Field(ge=1, lt=2**31)
    redirect_url: str = Field(default="", max_length=2000)
    app_user_id: int | None = Field(default=None, ge=1, lt=2**63)
    method: Literal["oauth", "token"] | None = Field(
        default=None, description="token: connect an OAuth2 app with its token method's fields"
    )
    auth_response: dict[str, str] = Field(
        max_length=50,
        description="Token apps: field id to value. OAuth2 apps: code and state from the provider's redirect.",
    )

    @field_validator("auth_response")
    @classmethod
    def _bounded(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if len(key) > 100 or len(item) > 8000 or "\x00" in item or "\x00" in key:
                raise ValueError("values must be at most 8000 characters without NUL characters")
        return value


class AuthorizationOut(BaseModel):
    status: str
    app_user_id: int
    name: str


class UpdateLabelIn(BaseModel):
    label: str = Field(min_length=1, max_length=255)

    @field_validator("label")
    @classmethod
    def _clean(cls, value: str) -> str:
        value = value.strip()
        if not value or any(ord(ch) < 32 for ch in value):
            raise ValueError("must be a non-empty name without control characters")
        return value


class UpdateAccountStatusIn(BaseModel):
    status: Literal["REMOVE"]


class AccountStatusOut(BaseModel):
    message: Literal["SUCCESS", "FAILURE"]
    details: str


# --- konnects -----------------------------------------------------------------------------
class CanvasJson(BaseModel):
    """The editor document. Only the top-level shape is checked here (a draft is saved as the editor
    sent it); publishing parses and compiles it. The OpenAPI document describes it as the typed
    :class:`~konnectz_contracts.canvas.Canvas` (its nodes and links), so the web's generated types have them."""

    model_config = ConfigDict(extra="allow")

    apps: list[dict[str, Any]] = Field(max_length=500)
    links: list[dict[str, Any]] = Field(default_factory=list, max_length=1000)
    dataForSelect: dict[str, Any] | list[Any] = Field(default_factory=dict)
    flowName: str = Field(default="", max_length=255)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(Canvas.__pydantic_core_schema__)


# revisions
REVISION_MESSAGE_MAX = 500


def _revision_message(value: str | None) -> str | None:
    """A revision's message: no control characters but line breaks and tabs (PostgreSQL stores no NUL)."""
    if value is not None and any((ord(ch) < 32 and ch not in "\n\r\t") or ord(ch) == 127 for ch in value):
        raise ValueError("must not contain control characters")
    return value


RevisionMessage = Annotated[str | None, Field(max_length=REVISION_MESSAGE_MAX), AfterValidator(_revision_message)]


class SaveKonnectIn(BaseModel):
    konnect_id: int | None = None
    canvas_name: bool = False
    canvas_json: CanvasJson
    publish: bool = False
    # revisions
    message: RevisionMessage = Field(
        default=None, description="With a publish: what changed, kept with the new revision (up to 500 characters)"
    )


#: The ``sealed_by_name`` of the replies of a write of a canvas (:func:`konnectz_api.step_secrets.sealed_by_name`).
SEALED_BY_NAME = (
    "Header and query-parameter rows sent with `secret: false` (or without `secret`) that were stored as "
    "secret anyway: their name is on the default list (`GET /api/v1/konnects/secret_names`), which is always "
    'secret. Each as `"<node id> <headers|params> <name>"`, e.g. `"node-2 headers Authorization"`; the flow '
    "reads them back with `secret: true` and the value masked"
)


class SaveKonnectOut(BaseModel):
    status: Literal["SUCCESS"]
    message: str
    konnect_id: int
    konnect_status: str
    webhook_url: str
    draft_pending: bool = Field(
        default=False,
        description="true: the flow is live (Published) and the saved changes wait beside the live version "
        "until Publish; the live version keeps running",
    )
    # revisions
    revision: int | None = Field(
        default=None, description="After a publish: the number of the revision that went live (1, 2, 3...)"
    )
    sealed_by_name: list[str] = Field(default_factory=list, description=SEALED_BY_NAME)


class RightApp(BaseModel):
    app_name: str


class LeftApp(BaseModel):
    name: str


class KonnectItem(BaseModel):
    id: int
    konnect_name: str
    status: str
    created_at: datetime
    success_task_count: int = Field(description="Runs that did every step (status SUCCESS)")
    error_task_count: int = Field(description="Failed runs: status ERROR, IN_DOUBT or REFUSED")
    filtered_task_count: int = Field(default=0, description="Runs stopped by a filter (status FILTERED)")
    left_app: LeftApp | None
    right_apps: list[RightApp]
    webhook_url: str = Field(
        description="The flow's webhook address; it starts runs only when trigger_kind is webhook (or form, "
        "whose page is under /forms/)"
    )
    trigger_kind: TriggerKind | None = Field(
        default=None, description="The live version's trigger kind; null for a flow that is not published"
    )
    schedule: str | None = Field(default=None, description="A live schedule trigger in words, with its time zone")
    draft_pending: bool = Field(
        default=False, description="A live flow with saved changes waiting beside the live version"
    )
    folder_id: int | None = None
    phase: str | None = Field(
        default=None,
        description="On Kubernetes, the phase of a published flow's Konnect resource (Pending, Ready, Paused, "
        "Failed); null for drafts and without Kubernetes.",
    )


class KonnectList(BaseModel):
    konnects: list[KonnectItem]
    total_konnects: int


class KonnectEdit(BaseModel):
    konnect_id: int
    konnect_name: str
    status: str
    draft_pending: bool = Field(
        default=False, description="canvas_json holds saved changes not yet published beside the live version"
    )
    canvas_json: dict[str, Any] = Field(
        description="The editor document; a secret header or param row (marked `secret`, or named on the "
        "default list: always `secret: true` here) shows its value as the mask"
    )
    webhook_url: str


class SecretNames(BaseModel):
    """Secrets typed into steps: the names always secret (one list, :mod:`konnectz_api.step_secrets`)."""

    names: list[SecretName] = Field(description="Whole names, in lower case")
    name_parts: list[SecretNamePart] = Field(description="A name containing one of these, in lower case")
    mask: Literal["••••••"] = Field(default=MASK, description="What replies show in place of a secret value")


LooseId = int | str | None


class TriggerFilterIn(BaseModel):
    """The trigger test drawer's choice (canvas spec §2, Trigger test drawer): the sample the trigger's
    test answers must have a value for the checked ``labels`` (keys of the trigger's data, dotted for
    nested values, e.g. ``customer.email``): every one of them with ``AND`` (the default), at least
    one with ``OR``. "Has a value" is the Filter's *Is Exist*: present, not null, not empty text.
    No labels: any sample is kept. When no sample qualifies the test is refused (422), and the
    node's earlier test result is kept."""

    model_config = ConfigDict(extra="forbid")

    join: Literal["AND", "OR"] = "AND"
    labels: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: list[str]) -> list[str]:
        for label in labels:
            if not label.strip() or len(label) > 300 or "\x00" in label:
                raise ValueError("each label is a key of the trigger's data: 1 to 300 characters, no NUL")
        return list(dict.fromkeys(label.strip() for label in labels))


class TestAndReviewIn(BaseModel):
    """Test one node (canvas spec §3, Test payload). ``node_id`` names the node; without it a
    payload carrying ``left_app_id`` tests the trigger. The trigger's test creates the konnect
    (a draft) when ``konnect_id`` is null; an action's test needs the tested trigger's konnect_id."""

    model_config = ConfigDict(extra="ignore")

    canvas_json: CanvasJson
    node_id: str | None = Field(default=None, min_length=1, max_length=100)
    nodeId: str | None = Field(default=None, min_length=1, max_length=100)
    konnect_id: int | None = Field(default=None, ge=1, le=2**63 - 1)
    konnect_activity_id: int | None = Field(default=None, ge=1, le=2**63 - 1)
    app_id: LooseId = Field(default=None, union_mode="left_to_right")
    app_event_id: LooseId = Field(default=None, union_mode="left_to_right")
    app_account_id: LooseId = Field(default=None, union_mode="left_to_right")
    left_app_id: LooseId = Field(default=None, union_mode="left_to_right")
    left_app_event_id: LooseId = Field(default=None, union_mode="left_to_right")
    provider: str | None = Field(default=None, max_length=100)
    config: dict[str, Any] | list[Any] | None = None
    left_config: dict[str, Any] | list[Any] | None = None
    delay_config: dict[str, Any] | list[Any] | None = None
    trigger_filter: TriggerFilterIn | None = Field(
        default=None, description="The trigger's test only: which sample to accept (the drawer's AND/OR and labels)"
    )

    @property
    def tested_node(self) -> str | None:
        return self.node_id or self.nodeId


class KonnectCustom(BaseModel):
    """Set when the tested trigger needs a custom script: the editor opens its script-triggers page."""

    script_id: int = Field(description="Open /script-triggers/{script_id} (GET /api/v1/script_triggers/{script_id})")


class ScriptTriggerOut(BaseModel):
    """The script the user installs in the app for a custom-script trigger, and its status."""

    script_id: int
    konnect_id: int
    app_name: str
    event_label: str
    platform: str = Field(description='Where the script runs, e.g. "Google Apps Script"')
    install: list[str] = Field(description="The steps to install the script, in order")
    source: str = Field(description="The script, with the konnect's webhook URL filled in")
    webhook_url: str
    status: Literal["WAITING", "RECEIVED"] = Field(description="RECEIVED once the script's first request arrived")
    display_message: str
    raw_response: dict[str, Any] | None = Field(description="The script's request (the trigger's data), once received")


class TestAndReviewOut(BaseModel):
    test_status: Literal["Success", "Error"]
    display_message: str
    raw_response: Any = Field(description="The node's output (the trigger's data, or the step's result)")
    konnect_id: int
    konnect_activity_id: int
    webhook_url: str | None = Field(default=None, description="Set when the tested node is a Webhook trigger")
    pass_through_condition: bool | None = Field(default=None, description="Filter nodes: did the conditions pass")
    konnect_custom: KonnectCustom | None = Field(
        default=None, description="Custom-script triggers: the script to install (open its script-triggers page)"
    )
    sealed_by_name: list[str] = Field(default_factory=list, description=SEALED_BY_NAME)


class TestRefusedOut(BaseModel):
    """A test that could not run (mandatory fields, untested trigger, invalid node)."""

    message: str
    test_status: Literal["Error"]
    display_message: str


class CaptureOut(BaseModel):
    message: Literal["WAITING", "SUCCESS"]
    test_status: Literal["WAITING", "Success"]
    display_message: str
    raw_response: dict[str, Any] | None
    konnect_id: int
    konnect_activity_id: int | None
    webhook_url: str


class DeleteActivityIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    konnect_id: int = Field(ge=1, le=2**63 - 1)
    konnect_activity_id: int | None = Field(default=None, ge=1, le=2**63 - 1)
    nodeId: str | None = Field(default=None, min_length=1, max_length=100)
    canvas_json: CanvasJson | None = None


class DeleteActivityOut(BaseModel):
    status: Literal["SUCCESS"]
    message: str
    sealed_by_name: list[str] = Field(default_factory=list, description=SEALED_BY_NAME)


class UpdateStatusIn(BaseModel):
    status: Literal["Draft", "DELETED", "Published"]


class UpdateStatusOut(BaseModel):
    status: Literal["SUCCESS"]
    message: Literal["SUCCESS"]
    details: str = Field(description="What happened: published, withdrawn, or withdrawn and deleted")
    konnect_id: int
    konnect_status: str


class DashboardStats(BaseModel):
    total_konnects: int = Field(description="Flows not deleted")
    active_konnects: int = Field(description="Published flows")
    inactive_konnects: int = Field(description="Draft flows")
    task_limit: int
    task_consumed: int
    task_available: int


# --- task logs ----------------------------------------------------------------------------
class TaskLogOut(BaseModel):
    id: int
    konnect_id: int
    status: TaskLogStatus = Field(
        description="SUCCESS: every step ran; FILTERED: a filter stopped the run; ERROR: a step failed; "
        "IN_DOUBT: the runner stopped during a step with effects (not run again); REFUSED: refused before any "
        "step (the task quota); CANCELLED: a user cancelled it (cancelled_by). Task logs older than these statuses "
        "hold SUCCESS or ERROR."
    )
    task_date: datetime
    data: dict[str, Any]
    run_id: str = Field(default="", description="The run's id (what the webhook answered with)")
    attempts: int = Field(
        default=1, description="Deliveries of the run to a worker (more than 1 when a runner died or was busy)"
    )
    replay_of: str | None = Field(default=None, description="run_id of the run this one replays")
    replayed_as: str | None = Field(default=None, description="run_id of this run's latest replay")
    # revisions
    revision: int | None = Field(
        default=None, description="The flow's revision the run executed (null: published before revisions)"
    )
    # run control
    cancelled_by: str | None = Field(default=None, description="Who cancelled the run (status CANCELLED): an e-mail")


class ActiveRunOut(BaseModel):
    """A run that has not finished (run control)."""

    run_id: str
    konnect_id: int
    status: ActiveStatus = Field(
        description="QUEUED: waits for a concurrency slot; RUNNING: executes step_id; WAITING: in delay step_id "
        "until resume_at"
    )
    since: datetime = Field(description="When the run started (QUEUED: when it was queued)")
    step_id: str | None = None
    resume_at: datetime | None = None


class ActiveRunList(BaseModel):
    runs: list[ActiveRunOut]


class CancelRunOut(BaseModel):
    message: str
    run_id: str
    status: ActiveStatus = Field(description="What the run was doing when it was cancelled")


class ReplayOut(BaseModel):
    message: str
    run_id: str = Field(description="The new run's id; its task log has replay_of = the replayed run's run_id")
    replay_of: str
    already_replayed: bool = Field(
        default=False, description="true: the run was replayed before and this is that replay (nothing started)"
    )


class TaskLogList(BaseModel):
    task_logs: list[TaskLogOut]
    total: int


class StepApp(BaseModel):
    """Which app or add-on a step of the flow is, read from the flow's canvas (its current version)."""

    step_id: str
    app_name: str
    app_id: int | None = Field(default=None, description="Catalogue app id (its icon: /api/v1/apps/{app_id}/icon)")
    provider: str = Field(default="", description="The app's key or the add-on (webhook, filter, formatter, ...)")


class TaskOut(BaseModel):
    id: int
    task_date: datetime = Field(description="When the step ended")
    step_id: str
    app_name: str
    status: str
    data: dict[str, Any] = Field(
        description="input, output, error, (a filter that stopped the run, or a skipped path's step) stop, "
        'and (a step on a router path) path: "<router step id>/<path name>"'
    )
    started_at: datetime | None = Field(default=None, description="When the step started (unknown for old tasks)")
    duration_ms: int | None = Field(default=None, description="task_date - started_at in milliseconds")
    app_id: int | None = Field(default=None, description="The step's catalogue app id, when the flow still has it")
    provider: str = Field(default="", description="The step's app key or add-on, when the flow still has it")


class TaskList(BaseModel):
    tasks: list[TaskOut]
    trigger: StepApp | None = Field(default=None, description="The flow's trigger (the run's data holds its output)")


# --- Members (routes/members.py) -------------------------------------------------------------------------

AccessLevel = Literal["Create", "Create/Delete", "FULL"]


class _MemberFields(BaseModel):
    model_config = ConfigDict(extra="ignore")

    first_name: str | None = Field(default=None, min_length=1, max_length=100)
    last_name: str | None = Field(default=None, max_length=100)
    name: str | None = Field(default=None, max_length=201, description="Full name; used when first_name is missing")

    @field_validator("first_name", "last_name", "name")
    @classmethod
    def _no_control_characters(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 for ch in value):
            raise ValueError("must not contain control characters")
        return value

    def names(self) -> tuple[str | None, str | None]:
        if self.first_name is None and self.name and self.name.strip():
            first, _, last = self.name.strip().partition(" ")
            return first[:100], (self.last_name if self.last_name is not None else last[:100])
        return self.first_name, self.last_name


class TeamMemberIn(_MemberFields):
    email: EmailStr
    access: AccessLevel


class TeamMemberUpdate(_MemberFields):
    sub_account_id: int = Field(ge=1, lt=2**63)
    access: AccessLevel | None = None


class SubAccountIn(_MemberFields):
    email: EmailStr
    task: int = Field(ge=0, le=10**9, description="The sub-account's own task quota")


class SubAccountUpdate(_MemberFields):
    sub_account_id: int = Field(ge=1, lt=2**63)
    task: int | None = Field(default=None, ge=0, le=10**9)


class MemberOut(BaseModel):
    id: int
    name: str
    first_name: str
    last_name: str
    email: str
    access: AccessLevel | None = Field(default=None, description="Team members only")
    task: int | None = Field(default=None, description="Sub-accounts only: their task quota")
    task_consumed: int | None = None
    remaining: int | None = Field(default=None, description="task - task_consumed")


class TeamList(BaseModel):
    team_users: list[MemberOut]
    total: int
    allowed_limit: int


class AgencyList(BaseModel):
    total_tasks: int
    task_consumed: int
    total_subaccounts: int
    allowed_subaccount_limit: int
    sub_accounts: list[MemberOut]


class ResellerList(BaseModel):
    reseller_users: list[MemberOut]
    total: int


class MemberReply(BaseModel):
    message: str
    member: MemberOut | None = None


class AuditEntryOut(BaseModel):
    id: int
    actor_email: str
    action: str
    outcome: str
    address: str | None
    created_at: datetime


class AuditLogOut(BaseModel):
    entries: list[AuditEntryOut]
    total: int


# --- Widgets (routes/widgets.py) -------------------------------------------------------------------------


class WidgetOut(BaseModel):
    id: str
    name: str
    url: str = Field(description="The frame URL on the AI host, with authToken appended")


class WidgetDetails(BaseModel):
    """One AI frame. Without an AI host ``configured`` is false and ``url`` null (a 200, not an error:
    the page then says how to start one)."""

    id: str
    name: str
    configured: bool = Field(description="False when no AI host is configured (KONNECTZ_AI_HOST_URL unset)")
    url: str | None = Field(description="The frame URL on the AI host, with authToken appended; null if not configured")
    message: str | None = Field(default=None, description="Why there is no frame, when configured is false")


class WidgetList(BaseModel):
    widgets: list[WidgetOut]
    ai_host_configured: bool


# --- revisions ----------------------------------------------------------------------------
class RevisionItem(BaseModel):
    number: int = Field(description="1, 2, 3... per flow")
    message: str = Field(description="What the publisher said changed (may be empty)")
    published_by: int | None = Field(default=None, description="Id of the user who published it")
    published_by_email: str = Field(description="E-mail of the user who published it")
    created_at: datetime
    restored_from: int | None = Field(default=None, description="The revision this one restored, if a restore")
    live: bool = Field(description="true: this revision is the one running")


class RevisionList(BaseModel):
    revisions: list[RevisionItem]
    total: int
    live_revision: int | None = Field(description="The revision running now (null: the flow is not live)")


class RevisionDetail(RevisionItem):
    canvas_json: dict[str, Any] = Field(description="The editor document published (secret values masked)")
    spec: dict[str, Any] = Field(description="The compiled flow spec published (without the webhook token)")


class RestoreIn(BaseModel):
    message: RevisionMessage = Field(
        default=None, description="Kept with the new revision; default: 'Restored revision N'"
    )
