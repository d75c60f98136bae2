"""Filter / conditioner (in-house add-on): the flow goes on only when its conditions pass.

Each condition compares a ``field`` (text with references, usually exactly one such as
``{{node-1.total}}``) with a ``value`` by one of the twelve operators of the editor. Conditions
are joined by ``AND`` / ``OR`` (the editor's +And / +OR); ``AND`` binds tighter than ``OR``, as in
SQL: ``a AND b OR c AND d`` passes when (a and b) or (c and d).

Operators (labels as the editor shows them):

- Lesser Than, Greater Than: numbers compare as numbers (``"9" < "10"``); when both sides are
  dates (ISO 8601, e.g. ``2026-03-08T10:00:00Z``) they compare in time; anything else does not pass.
- Equal To, Does Not Equal To: numbers by value (``"10" = "10.0"``), everything else as exact,
  case-sensitive text (objects and lists as JSON text).
- Contain String, Does Not Contain String, Start With, Does Not Start With, End With, Does Not End
  With: text, case-insensitive; on a list, Contain String passes when an element contains it.
- Is Exist, Does Not Exist: the field has a value: the referenced key is present and neither
  null nor empty text (``value`` is ignored).

A field whose reference does not exist fails every operator except Does Not Exist (and the
negated text operators, which then pass: missing text does not contain anything).

When the conditions pass the output is ``{"passed": true, "conditions": [...]}``. When they do
not, the step returns :attr:`Outcome.stop` with a line naming the condition that stopped the run
(for each OR group, its first failing condition); the run ends as SUCCESS and the task log
shows the filter's output ``{"passed": false, "stopped_by": "<that line>", "conditions": [...]}``.

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Filter node (provider ``conditioner``) → the runner's ``filter`` step.

``filterValues`` holds the conditions as the editor keeps them:

- ``field``: what to test: ``{"key", "label", "value", ...}`` (its ``value`` a reference such as
  ``{{node-1.total}}``; without one, ``{{<selectedNodeId>.<key>}}``) or plain text;
- ``operator`` (or ``operatorValue``): one of the twelve labels (Lesser Than … Does Not Contain
  String) or the runner's operator names; an ``{"label", "value"}`` option works too;
- ``valueOfFilter`` (or ``value``): what to compare with;
- the join: a new condition records +And / +OR on the previous one (``joinWith``); a condition's
  own ``queryOperator`` is used when the previous one has none. AND binds tighter than OR.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import CompileError, Loose, Text, fail, is_blank, text, validated
from konnectz_contracts.model import StepBase, Strict

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "KIND",
    "LABELS",
    "PROVIDERS",
    "Condition",
    "Config",
    "FilterCondition",
    "FilterField",
    "Operator",
    "compile_conditions",
    "compile_node",
]

KIND = "filter"
ORDER = 6  # its place in the Step union (the CRD's oneOf order)

Operator = Literal[
    "less_than",
    "greater_than",
    "exists",
    "not_exists",
    "starts_with",
    "not_starts_with",
    "ends_with",
    "not_ends_with",
    "equals",
    "not_equals",
    "contains",
    "not_contains",
]
# The editor's labels (canvas spec §5), by operator.
LABELS: dict[str, str] = {
    "less_than": "Lesser Than",
    "greater_than": "Greater Than",
    "exists": "Is Exist",
    "not_exists": "Does Not Exist",
    "starts_with": "Start With",
    "not_starts_with": "Does Not Start With",
    "ends_with": "End With",
    "not_ends_with": "Does Not End With",
    "equals": "Equal To",
    "not_equals": "Does Not Equal To",
    "contains": "Contain String",
    "not_contains": "Does Not Contain String",
}


class Condition(Strict):
    field: str = Field(min_length=1, description="What to test; text with references, e.g. {{node-1.total}}")
    operator: Operator
    value: str = Field(default="", description="What to compare with; may carry references")
    join: Literal["AND", "OR"] = Field(default="AND", description="How it joins the condition before it")


class Config(StepBase):
    kind: Literal["filter"] = "filter"
    conditions: list[Condition] = Field(min_length=1, max_length=50)


# The editor's shape of a condition (``filterValues`` entries; also a router path's ``conditions``).
class FilterField(Loose):
    key: Text = ""
    label: Text = ""
    value: Any = None
    name: Text = ""
    konnect_activity_id: int | str | None = None


class FilterCondition(Loose):
    """One condition of a Filter node, as the editor keeps it (canvas spec §3, Filter condition)."""

    id: Annotated[str | int, Field(union_mode="left_to_right")] | None = None
    field: FilterField | str | None = None
    operator: Any = None
    operatorValue: Any = None
    value: Any = None
    valueOfFilter: Any = None
    queryOperator: Text = ""
    joinWith: Text = ""
    selectedNodeId: Text = ""


PROVIDERS = ("conditioner", "filter")
_BY_LABEL = {label.casefold(): op for op, label in LABELS.items()}
_BY_LABEL.update({op: op for op in LABELS})


def _operator(node: Node, number: int, condition: Any) -> str:
    for raw in (condition.operator, condition.operatorValue):
        if isinstance(raw, dict):
            raw = raw.get("value", raw.get("label"))
        if isinstance(raw, str) and raw.strip():
            found = _BY_LABEL.get(raw.strip().casefold())
            if found is None:
                raise fail(node, f"condition {number}: unknown operator {raw[:50]!r}")
            return found
    raise fail(node, f"condition {number}: choose an operator")


def _field(node: Node, number: int, condition: Any) -> str:
    field = condition.field
    if isinstance(field, str):
        chosen = field.strip()
    elif field is None:
        chosen = ""
    elif isinstance(field.value, str) and "{{" in field.value:
        chosen = field.value.strip()
    elif field.key.strip() and condition.selectedNodeId.strip():
        chosen = f"{{{{{condition.selectedNodeId.strip()}.{field.key.strip()}}}}}"
    elif field.key.strip().startswith("{{"):
        chosen = field.key.strip()
    else:
        chosen = text(field.value).strip() if isinstance(field.value, str | int | float) else ""
    if not chosen:
        raise fail(node, f"condition {number}: choose the field to test")
    return chosen


def _join(raw: str) -> str | None:
    cleaned = raw.strip().lstrip("+").upper()
    return cleaned if cleaned in ("AND", "OR") else None


def compile_conditions(node: Node, raw: Any, *, where: str = "") -> list[dict[str, Any]]:
    """The conditions of ``raw`` (entries shaped like ``filterValues``) as :class:`Condition` dicts.

    Blank entries (no field and no operator) are left out; an empty result is the caller's to judge.
    ``where`` prefixes every message (e.g. ``"path Paid: "``)."""
    conditions = [c for c in raw or () if not (is_blank(c.field) and is_blank(c.operator))]
    compiled: list[dict[str, Any]] = []
    for number, condition in enumerate(conditions, start=1):
        try:
            operator = _operator(node, number, condition)
            raw_value = condition.valueOfFilter if not is_blank(condition.valueOfFilter) else condition.value
            if isinstance(raw_value, dict):
                raw_value = raw_value.get("value", "")
            try:
                value = text(raw_value)
            except TypeError as exc:
                raise fail(node, f"condition {number}: the value must be text") from exc
            field = _field(node, number, condition)
        except CompileError as exc:
            if not where:
                raise
            raise CompileError(str(exc).replace(f"{node.label}: ", f"{node.label}: {where}", 1)) from exc
        join = "AND"
        if number > 1:
            previous = conditions[number - 2]
            join = _join(previous.joinWith) or _join(condition.queryOperator) or "AND"
        compiled.append({"field": field, "operator": operator, "value": value, "join": join})
    return compiled


def compile_node(node: Node) -> Config:
    compiled = compile_conditions(node, node.data.filterValues)
    if not compiled:
        raise fail(node, "add at least one condition")
    return validated(Config, node, id=node.id, name=node.detail.name or "Filter", conditions=compiled)
