"""The editor document (canvas_json) as typed pydantic models.

The SPA saves whatever it needs to redraw the canvas, so every model allows extra keys; what the
compiler and Test & Review read is typed here. A node is one of the editor's node types
(discriminated by ``type``); which add-on or app it is comes from ``data.app_detail.provider``.
A kind's own node-config shape lives in its kind module (``inHouseAppConfig.coupon`` is
:class:`konnectz_contracts.steps.coupon.CouponConfig`), which compiles the node (``compile_node``);
the kind modules import this one only for the type checker (they take a :class:`Node`), so there is
no cycle.

    Canvas
     ├── apps: list[CanvasNode]      WebhookInner | TriggerNode | ActionNode | Api | Formatter |
     │                               InHouse | Generator | Filter | Scheduler | FormInput | Coupon |
     │                               router | join (paths that join)
     └── links: list[Link]           source -> target (node ids)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from konnectz_contracts.compiling import CompileError, Loose, Text, fail
from konnectz_contracts.on_error import CanvasOnError
from konnectz_contracts.steps.coupon import CouponConfig
from konnectz_contracts.steps.filter import FilterCondition
from konnectz_contracts.steps.join import JoinNodeData
from konnectz_contracts.steps.router import RouterNodeData

__all__ = [
    "AppDetail",
    "Canvas",
    "CanvasAlert",
    "CanvasNode",
    "CanvasRunControl",
    "CompileError",
    "ConfigResponse",
    "FilterCondition",
    "Link",
    "Node",
    "NodeData",
    "NodeParseError",
    "fail",
    "parse_canvas",
]


NODE_TYPES = (
    "WebhookInner",
    "TriggerNode",
    "ActionNode",
    "Api",
    "Formatter",
    "InHouse",
    "Generator",
    "Filter",
    "Scheduler",
    "FormInput",
    "Coupon",
    "router",
    "join",
)


Id = Annotated[str | int, Field(union_mode="left_to_right")]


class AppDetail(Loose):
    id: int | str | None = None
    name: Text = ""
    provider: Text = ""
    app_type: Text = ""
    app_index: int | None = None
    side: Literal["left", "right"] | None = None


class ConfigResponse(Loose):
    """One configuration field of a node (``config_key`` → ``value``)."""

    label: Text = ""
    config_key: Text = ""
    value: Any = None
    config_key_required: bool | None = None


class KeyEntry(Loose):
    key: Text = ""
    value: Any = None
    # A header or param value typed as secret (:mod:`konnectz_api.step_secrets`; a name on its default
    # list always is, whatever ``secret`` says): stored encrypted in ``sealed`` (only the api writes it),
    # with ``value`` empty and ``secret`` true.
    secret: bool = False
    sealed: str | None = None


class ApiDetails(Loose):
    method: Text = "POST"
    endpointURL: Text = ""
    headers: list[KeyEntry] | None = Field(default=None, max_length=200)
    params: list[KeyEntry] | None = Field(default=None, max_length=200)
    body: list[KeyEntry] | None = Field(default=None, max_length=500)


class SelectedValue(Loose):
    wrap_in_array: Text = "NO"
    payload_type: Text = "JSON"
    apiDetails: ApiDetails | None = None


class InHouseAppConfig(Loose):
    coupon: CouponConfig | None = None
    segmentIndex: Any = None


class NodeData(Loose):
    node_id: Text = ""
    app_detail: AppDetail = Field(default_factory=AppDetail)
    selectedEvent: dict[str, Any] | None = None
    selectedValue: SelectedValue | None = None
    configResponses: list[ConfigResponse] | None = Field(default=None, max_length=500)
    selectedAddonsValue: dict[str, Any] | None = None
    inHouseAppConfig: InHouseAppConfig | None = None
    filterValues: list[FilterCondition] | None = Field(default=None, max_length=50)
    keyList: list[KeyEntry | str] | None = Field(default=None, max_length=200)
    timerConfigs: Any = None
    # What the step does when it fails: retries, continue on error (konnectz_contracts.on_error)
    onError: CanvasOnError | None = None


class Node(Loose):
    """What every node of the canvas has (the base of each node type of :data:`CanvasNode`): a kind's
    ``compile_node`` takes one."""

    id: Annotated[str, Field(min_length=1, max_length=100)]
    data: NodeData = Field(default_factory=NodeData)
    position: dict[str, Any] | None = None

    @property
    def detail(self) -> AppDetail:
        return self.data.app_detail

    @property
    def label(self) -> str:
        """How messages name the node: its app name and node id."""
        name = self.detail.name.strip() or self.detail.provider or "Node"
        return f"{name} ({self.id})"

    @property
    def provider(self) -> str:
        return self.detail.provider.strip().lower()

    @property
    def is_trigger(self) -> bool:
        return self.detail.app_index == 1 or self.detail.side == "left"


class WebhookInnerNode(Node):
    type: Literal["WebhookInner"]


class TriggerNode(Node):
    type: Literal["TriggerNode"]


class ActionNode(Node):
    type: Literal["ActionNode"]


class ApiNode(Node):
    """The API call and the data forwarder."""

    type: Literal["Api"]


class FormatterNode(Node):
    type: Literal["Formatter"]


class InHouseNode(Node):
    """Splitter, iterator, delay and other in-house add-ons without their own card."""

    type: Literal["InHouse"]


class GeneratorNode(Node):
    type: Literal["Generator"]


class FilterNode(Node):
    type: Literal["Filter"]


class SchedulerNode(Node):
    type: Literal["Scheduler"]


class FormInputNode(Node):
    type: Literal["FormInput"]


class CouponNode(Node):
    type: Literal["Coupon"]


class RouterData(NodeData, RouterNodeData):
    pass


class JoinData(NodeData, JoinNodeData):
    pass


class _PathsNode(Node):
    """A router or join node: its kind is its type (the editor may also set ``app_detail.provider``)."""

    @property
    def provider(self) -> str:
        return str(getattr(self, "type", ""))

    @property
    def label(self) -> str:
        name = self.detail.name.strip() or str(getattr(self, "type", "Node")).capitalize()
        return f"{name} ({self.id})"


class RouterNode(_PathsNode):
    """A router (:mod:`konnectz_contracts.steps.router`): ``data.routerMode``, ``data.routerPaths``."""

    type: Literal["router"]
    data: RouterData = Field(default_factory=RouterData)


class JoinNode(_PathsNode):
    """A join (:mod:`konnectz_contracts.steps.join`): ``data.joinWait``."""

    type: Literal["join"]
    data: JoinData = Field(default_factory=JoinData)


CanvasNode = Annotated[
    WebhookInnerNode
    | TriggerNode
    | ActionNode
    | ApiNode
    | FormatterNode
    | InHouseNode
    | GeneratorNode
    | FilterNode
    | SchedulerNode
    | FormInputNode
    | CouponNode
    | RouterNode
    | JoinNode,
    Field(discriminator="type"),
]


class Link(Loose):
    source: Annotated[str, Field(min_length=1, max_length=100)]
    target: Annotated[str, Field(min_length=1, max_length=100)]
    sourceHandle: str | None = None
    targetHandle: str | None = None


class CanvasAlert(Loose):
    """The editor's failure alert (Run settings): checked and bounded when the flow is compiled."""

    email: bool = False
    runKonnectId: int | None = None
    digestMinutes: int | None = None


class CanvasRunControl(Loose):
    """The editor's Run settings (``canvas_json.runControl``), compiled into ``FlowSpec.run_control``."""

    deadlineSeconds: int | None = None
    maxConcurrency: int | None = None
    alert: CanvasAlert | None = None


class Canvas(Loose):
    apps: list[CanvasNode] = Field(max_length=500)
    links: list[Link] = Field(default_factory=list, max_length=1000)
    flowName: Text = ""
    # run control
    runControl: CanvasRunControl | None = None

    def node(self, node_id: str) -> Node | None:
        return next((n for n in self.apps if n.id == node_id), None)


class NodeParseError(ValueError):
    """canvas_json does not have the shape of an editor document; the message names the node."""


def _node_label(raw: Any, index: int) -> str:
    if isinstance(raw, dict):
        data: dict[str, Any] = raw["data"] if isinstance(raw.get("data"), dict) else {}
        detail: dict[str, Any] = data["app_detail"] if isinstance(data.get("app_detail"), dict) else {}
        name = detail.get("name") if isinstance(detail.get("name"), str) else None
        node_id = raw.get("id") if isinstance(raw.get("id"), str | int) else None
        if name or node_id:
            return f"{name or 'Node'} ({node_id or f'#{index + 1}'})"
    return f"Node #{index + 1}"


def _describe(error: Any) -> str:
    parts = list(error.get("loc", ())[2:])
    if parts and parts[0] in NODE_TYPES:  # the discriminated union adds the tag to the path
        parts = parts[1:]
    loc = ".".join(str(p) for p in parts)
    if error.get("type") == "union_tag_invalid":
        return f"unknown node type (one of {', '.join(NODE_TYPES)})"
    if error.get("type") == "union_tag_not_found":
        return "the node has no type"
    return f"{loc}: {error.get('msg')}" if loc else str(error.get("msg"))


def parse_canvas(raw: Any) -> Canvas:
    """The typed canvas, or :class:`NodeParseError` naming the first node (or part) that is wrong."""
    if not isinstance(raw, dict):
        raise NodeParseError("canvas_json must be an object")
    if not isinstance(raw.get("apps"), list):
        raise NodeParseError("canvas_json.apps must be a list of nodes")
    try:
        return Canvas.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = error.get("loc", ())
        if len(loc) >= 2 and loc[0] == "apps" and isinstance(loc[1], int):
            raise NodeParseError(f"{_node_label(raw['apps'][loc[1]], loc[1])}: {_describe(error)}") from exc
        where = ".".join(str(p) for p in loc)
        raise NodeParseError(f"canvas_json.{where}: {error.get('msg')}" if where else str(error.get("msg"))) from exc
