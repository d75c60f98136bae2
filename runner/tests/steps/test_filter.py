"""Filter: all twelve operators, AND/OR precedence, missing fields, the stop line."""

from __future__ import annotations

from typing import Any

import pytest

from konnectz_contracts.steps.filter import LABELS, Condition, Config
from konnectz_runner.engine.steps import filter as filter_step
from konnectz_runner.engine.steps.filter import evaluate

DATA = {
    "node-1": {
        "amount": 42,
        "price": "9.50",
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "empty": "",
        "none": None,
        "tags": ["VIP", "early"],
        "when": "2026-03-08T10:00:00+00:00",
        "flag": True,
    }
}


def check(field: str, operator: str, value: str = "") -> bool:
    passed, _records, _reason = evaluate([Condition(field=field, operator=operator, value=value)], DATA)  # type: ignore[arg-type]
    return passed


@pytest.mark.parametrize(
    ("field", "operator", "value", "expected"),
    [
        # Lesser Than / Greater Than: numbers as numbers, dates in time, else no pass.
        ("{{node-1.amount}}", "less_than", "100", True),
        ("{{node-1.amount}}", "less_than", "42", False),
        ("{{node-1.price}}", "less_than", "10", True),  # "9.50" < "10" numerically, not as text
        ("{{node-1.amount}}", "greater_than", "41.99", True),
        ("{{node-1.amount}}", "greater_than", "42", False),
        ("{{node-1.when}}", "greater_than", "2026-03-08T09:59:59Z", True),
        ("{{node-1.when}}", "less_than", "2026-03-08T09:59:59Z", False),
        ("{{node-1.name}}", "greater_than", "5", False),
        ("{{node-1.missing}}", "less_than", "5", False),
        # Is Exist / Does Not Exist
        ("{{node-1.email}}", "exists", "", True),
        ("{{node-1.empty}}", "exists", "", False),
        ("{{node-1.none}}", "exists", "", False),
        ("{{node-1.missing}}", "exists", "", False),
        ("{{node-1.flag}}", "exists", "", True),
        ("{{node-1.missing}}", "not_exists", "", True),
        ("{{node-1.empty}}", "not_exists", "", True),
        ("{{node-1.email}}", "not_exists", "", False),
        # Start With / Does Not Start With (case-insensitive)
        ("{{node-1.name}}", "starts_with", "ada", True),
        ("{{node-1.name}}", "starts_with", "Love", False),
        ("{{node-1.name}}", "not_starts_with", "Love", True),
        ("{{node-1.name}}", "not_starts_with", "ADA", False),
        # End With / Does Not End With
        ("{{node-1.email}}", "ends_with", "@EXAMPLE.com", True),
        ("{{node-1.email}}", "ends_with", ".org", False),
        ("{{node-1.email}}", "not_ends_with", ".org", True),
        ("{{node-1.email}}", "not_ends_with", ".com", False),
        # Equal To / Does Not Equal To: numbers by value, text exactly
        ("{{node-1.amount}}", "equals", "42.0", True),
        ("{{node-1.name}}", "equals", "Ada Lovelace", True),
        ("{{node-1.name}}", "equals", "ada lovelace", False),
        ("{{node-1.flag}}", "equals", "true", True),
        ("{{node-1.amount}}", "not_equals", "43", True),
        ("{{node-1.name}}", "not_equals", "Ada Lovelace", False),
        ("{{node-1.missing}}", "equals", "", False),
        # Contain String / Does Not Contain String
        ("{{node-1.name}}", "contains", "LOVE", True),
        ("{{node-1.name}}", "contains", "Byron", False),
        ("{{node-1.tags}}", "contains", "vip", True),
        ("{{node-1.name}}", "not_contains", "Byron", True),
        ("{{node-1.name}}", "not_contains", "love", False),
        ("{{node-1.missing}}", "not_contains", "x", True),
        # A field with text around the reference is compared as text.
        ("Name: {{node-1.name}}", "starts_with", "name: ada", True),
        # The value may carry references too.
        ("{{node-1.amount}}", "equals", "{{node-1.amount}}", True),
    ],
)
def test_operators(field: str, operator: str, value: str, expected: bool) -> None:
    assert check(field, operator, value) is expected


def test_all_twelve_operators_have_the_spec_labels() -> None:
    assert sorted(LABELS.values()) == sorted(
        [
            "Lesser Than", "Greater Than", "Is Exist", "Does Not Exist", "Start With", "Does Not Start With",
            "End With", "Does Not End With", "Equal To", "Does Not Equal To", "Contain String",
            "Does Not Contain String",
        ]
    )  # fmt: skip


def conditions(*specs: tuple[str, str, str, str]) -> list[Condition]:
    return [Condition(field=f, operator=o, value=v, join=j) for f, o, v, j in specs]  # type: ignore[arg-type]


T = ("{{node-1.amount}}", "equals", "42", "AND")
F = ("{{node-1.amount}}", "equals", "0", "AND")


def with_join(cond: tuple[str, str, str, str], join: str) -> tuple[str, str, str, str]:
    return (cond[0], cond[1], cond[2], join)


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        ([T, T], True),
        ([T, F], False),
        ([F, with_join(T, "OR")], True),
        ([F, with_join(F, "OR")], False),
        # AND binds tighter than OR: F AND T OR T  ==  (F and T) or T  -> True
        ([F, T, with_join(T, "OR")], True),
        # T OR F AND F  ==  T or (F and F)  -> True (left to right would give False)
        ([T, with_join(F, "OR"), F], True),
        ([F, with_join(T, "OR"), T], True),
        ([F, with_join(T, "OR"), F], False),
        # The join of the first condition is ignored.
        ([with_join(T, "OR")], True),
    ],
)
def test_and_binds_tighter_than_or(specs: list[tuple[str, str, str, str]], expected: bool) -> None:
    passed, records, reason = evaluate(conditions(*specs), DATA)
    assert passed is expected
    assert (reason is None) is expected
    assert [r["condition"] for r in records] == list(range(1, len(specs) + 1))


async def test_a_passing_filter_goes_on(make_ctx: Any) -> None:
    config = Config(
        id="node-2", name="Only big", conditions=conditions(("{{node-1.amount}}", "greater_than", "10", "AND"))
    )
    outcome = await filter_step.run(config, make_ctx(DATA))
    assert outcome.status == "SUCCESS" and outcome.stop is None
    assert outcome.output["passed"] is True
    assert outcome.output["conditions"][0] == {
        "condition": 1, "field": "{{node-1.amount}}", "operator": "Greater Than", "value": "10", "actual": 42,
        "join": None, "passed": True,
    }  # fmt: skip


async def test_a_failing_filter_stops_and_names_the_condition(make_ctx: Any) -> None:
    config = Config(
        id="node-2",
        name="Only big",
        conditions=conditions(
            ("{{node-1.email}}", "exists", "", "AND"), ("{{node-1.amount}}", "greater_than", "100", "AND")
        ),
    )
    outcome = await filter_step.run(config, make_ctx(DATA))
    assert outcome.status == "SUCCESS"
    assert outcome.stop == (
        "Stopped by condition 2 ({{node-1.amount}} Greater Than '100') did not pass: the value was 42"
    )
    assert outcome.output == {"passed": False, "stopped_by": outcome.stop, "conditions": outcome.output["conditions"]}


async def test_stop_line_for_or_groups_and_missing_fields(make_ctx: Any) -> None:
    config = Config(
        id="node-2",
        name="F",
        conditions=conditions(
            ("{{node-1.missing}}", "exists", "", "AND"), ("{{node-1.name}}", "contains", "Byron", "OR")
        ),
    )
    outcome = await filter_step.run(config, make_ctx(DATA))
    assert outcome.stop == (
        "Stopped: no group of conditions passed: condition 1 ({{node-1.missing}} Is Exist) did not pass: "
        "the value was missing (the field is empty or missing); condition 2 ({{node-1.name}} Contain String "
        "'Byron') did not pass: the value was \"Ada Lovelace\""
    )


def test_at_least_one_condition_is_required() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Config(id="n", name="F", conditions=[])
    with pytest.raises(ValidationError):
        Condition(field="{{a.b}}", operator="matches")  # type: ignore[arg-type]
