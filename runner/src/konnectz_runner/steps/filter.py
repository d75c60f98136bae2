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
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import Field

from konnectz_runner.model import Outcome, StepBase, StepContext, Strict
from konnectz_runner.refs import REFERENCE, lookup, resolve

__all__ = ["KIND", "LABELS", "Condition", "Config", "Operator", "evaluate", "run"]

KIND = "filter"

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
_NEGATED = {
    "not_starts_with": "starts_with",
    "not_ends_with": "ends_with",
    "not_equals": "equals",
    "not_contains": "contains",
}
_MISSING = object()


class Condition(Strict):
    field: str = Field(min_length=1, description="What to test; text with references, e.g. {{node-1.total}}")
    operator: Operator
    value: str = Field(default="", description="What to compare with; may carry references")
    join: Literal["AND", "OR"] = Field(default="AND", description="How it joins the condition before it")


class Config(StepBase):
    kind: Literal["filter"] = "filter"
    conditions: list[Condition] = Field(min_length=1, max_length=50)


def _field_value(field: str, outputs: dict[str, Any]) -> Any:
    """The field's value with its JSON type when it is one reference, ``_MISSING`` when that is absent."""
    match = REFERENCE.fullmatch(field.strip())
    if match is not None:
        try:
            return lookup(match.group(1), outputs)
        except KeyError:
            return _MISSING
    return resolve(field, outputs)


def _text(value: Any) -> str:
    if value is None or value is _MISSING:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None or value is _MISSING or isinstance(value, dict | list):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _date(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value.strip() or value.strip().lstrip("-").replace(".", "").isdigit():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment


def _order(left: Any, right: Any) -> int | None:
    """-1, 0, 1 comparing numbers or dates; None when they are neither (or not comparable)."""
    a, b = _number(left), _number(right)
    if a is not None and b is not None:
        return (a > b) - (a < b)
    da, db = _date(left), _date(right)
    if da is not None and db is not None:
        if (da.tzinfo is None) != (db.tzinfo is None):
            return None
        return (da > db) - (da < db)
    return None


def _test(operator: str, left: Any, right: str) -> tuple[bool, str | None]:
    """(passed, why not) for one operator; ``left`` may be ``_MISSING``."""
    if operator in _NEGATED:
        passed, _ = _test(_NEGATED[operator], left, right)
        return (not passed), None
    if operator == "exists":
        present = left is not _MISSING and left is not None and left != ""
        return present, None if present else "the field is empty or missing"
    if operator == "not_exists":
        present = left is not _MISSING and left is not None and left != ""
        return (not present), None if not present else "the field has a value"
    if left is _MISSING:
        return False, "the field is missing"
    if operator in ("less_than", "greater_than"):
        order = _order(left, right)
        if order is None:
            return False, "the values are not both numbers or both dates"
        return (order < 0 if operator == "less_than" else order > 0), None
    if operator == "equals":
        a, b = _number(left), _number(right)
        if a is not None and b is not None:
            return a == b, None
        return _text(left) == right, None
    needle = right.casefold()
    if operator == "contains" and isinstance(left, list):
        return any(needle in _text(item).casefold() for item in left), None
    haystack = _text(left).casefold()
    if operator == "contains":
        return needle in haystack, None
    if operator == "starts_with":
        return haystack.startswith(needle), None
    return haystack.endswith(needle), None


def _describe(number: int, condition: Condition, left: Any, right: str, why: str | None) -> str:
    shown = "missing" if left is _MISSING else json.dumps(left, ensure_ascii=False, default=str)[:100]
    compared = "" if condition.operator in ("exists", "not_exists") else f" {right!r}"
    line = f"condition {number} ({condition.field} {LABELS[condition.operator]}{compared}) did not pass"
    return f"{line}: the value was {shown}" + (f" ({why})" if why else "")


def evaluate(conditions: list[Condition], outputs: dict[str, Any]) -> tuple[bool, list[dict[str, Any]], str | None]:
    """(passed, one record per condition, the line saying what stopped the run or None)."""
    records: list[dict[str, Any]] = []
    groups: list[list[tuple[int, bool, str]]] = [[]]
    for number, condition in enumerate(conditions, start=1):
        if number > 1 and condition.join == "OR":
            groups.append([])
        left = _field_value(condition.field, outputs)
        right = resolve(condition.value, outputs)
        passed, why = _test(condition.operator, left, right)
        records.append(
            {
                "condition": number,
                "field": condition.field,
                "operator": LABELS[condition.operator],
                "value": right,
                "actual": None if left is _MISSING else left,
                "join": None if number == 1 else condition.join,
                "passed": passed,
            }
        )
        groups[-1].append((number, passed, "" if passed else _describe(number, condition, left, right, why)))
    if any(all(passed for _n, passed, _d in group) for group in groups):
        return True, records, None
    failures = [next(d for _n, passed, d in group if not passed) for group in groups]
    if len(failures) == 1:
        reason = f"Stopped by {failures[0]}"
    else:
        reason = "Stopped: no group of conditions passed: " + "; ".join(failures)
    return False, records, reason


async def run(config: Config, ctx: StepContext) -> Outcome:
    passed, records, reason = evaluate(config.conditions, ctx.outputs)
    recorded = {"conditions": [c.model_dump() for c in config.conditions]}
    if passed:
        return Outcome(output={"passed": True, "conditions": records}, input=recorded)
    return Outcome(output={"passed": False, "stopped_by": reason, "conditions": records}, input=recorded, stop=reason)
