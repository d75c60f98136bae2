"""Runs the ``filter`` step; its config and constants are :mod:`konnectz_contracts.steps.filter`."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from konnectz_contracts.refs import REFERENCE, lookup, resolve
from konnectz_contracts.steps.filter import LABELS, Condition, Config
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["evaluate", "run"]


_NEGATED = {
    "not_starts_with": "starts_with",
    "not_ends_with": "ends_with",
    "not_equals": "equals",
    "not_contains": "contains",
}
_MISSING = object()


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
