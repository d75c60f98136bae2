"""Filter node (provider ``conditioner``) → the runner's ``filter`` step.

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

from typing import Any

from konnectz_api.compilers._common import fail, is_blank, text, validated
from konnectz_contracts.steps import filter as filter_step

PROVIDERS = ("conditioner", "filter")
_BY_LABEL = {label.casefold(): op for op, label in filter_step.LABELS.items()}
_BY_LABEL.update({op: op for op in filter_step.LABELS})


def _operator(node: Any, number: int, condition: Any) -> str:
    for raw in (condition.operator, condition.operatorValue):
        if isinstance(raw, dict):
            raw = raw.get("value", raw.get("label"))
        if isinstance(raw, str) and raw.strip():
            found = _BY_LABEL.get(raw.strip().casefold())
            if found is None:
                raise fail(node, f"condition {number}: unknown operator {raw[:50]!r}")
            return found
    raise fail(node, f"condition {number}: choose an operator")


def _field(node: Any, number: int, condition: Any) -> str:
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


def compile_node(node: Any) -> filter_step.Config:
    conditions = [c for c in node.data.filterValues or () if not (is_blank(c.field) and is_blank(c.operator))]
    if not conditions:
        raise fail(node, "add at least one condition")
    compiled: list[dict[str, Any]] = []
    for number, condition in enumerate(conditions, start=1):
        operator = _operator(node, number, condition)
        raw_value = condition.valueOfFilter if not is_blank(condition.valueOfFilter) else condition.value
        if isinstance(raw_value, dict):
            raw_value = raw_value.get("value", "")
        try:
            value = text(raw_value)
        except TypeError as exc:
            raise fail(node, f"condition {number}: the value must be text") from exc
        join = "AND"
        if number > 1:
            previous = conditions[number - 2]
            join = _join(previous.joinWith) or _join(condition.queryOperator) or "AND"
        compiled.append({"field": _field(node, number, condition), "operator": operator, "value": value, "join": join})
    return validated(filter_step.Config, node, id=node.id, name=node.detail.name or "Filter", conditions=compiled)
