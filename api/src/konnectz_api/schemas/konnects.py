"""Konnects (flows): the canvas, save and publish, Test & Review, status, the dashboard (``routes/konnects.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, GetJsonSchemaHandler, field_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from konnectz_api.compile.live_trigger import TriggerKind
from konnectz_api.step_secrets import MASK, SecretName, SecretNamePart
from konnectz_contracts.canvas import Canvas


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


class CallableFlowOut(BaseModel):
    """A published flow a Call a Flow step can call (it starts with 'Called by a flow or AI tool')."""

    id: int
    name: str
    description: str = ""
    inputs: list[dict[str, Any]] = Field(
        default_factory=list, description="The trigger's inputs (a form's fields: key, label, type, required, options)"
    )


class CallableFlowList(BaseModel):
    flows: list[CallableFlowOut]
