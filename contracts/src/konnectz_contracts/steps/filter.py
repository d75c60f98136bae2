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

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import StepBase, Strict

__all__ = ["KIND", "LABELS", "Condition", "Config", "Operator"]

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


class Condition(Strict):
    field: str = Field(min_length=1, description="What to test; text with references, e.g. {{node-1.total}}")
    operator: Operator
    value: str = Field(default="", description="What to compare with; may carry references")
    join: Literal["AND", "OR"] = Field(default="AND", description="How it joins the condition before it")


class Config(StepBase):
    kind: Literal["filter"] = "filter"
    conditions: list[Condition] = Field(min_length=1, max_length=50)
