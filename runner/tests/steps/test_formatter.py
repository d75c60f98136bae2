"""Formatter: every function, its options and edge cases (time zones and DST included)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.steps.formatter import OPERATIONS, Config
from konnectz_runner.engine.steps import formatter

TRIGGER = {
    "name": "  ada LOVELACE  ",
    "note": "Mail ada@example.com or see https://example.com/a?b=1).",
    "total": 1234.5,
    "qty": "3",
    "price": "1.234,50",
    "when": "2026-03-08T01:30:00",
    "items": ["a", "b"],
}


async def fmt(make_ctx: Any, operation: str, input: str = "{{node-1.name}}", *, tz: str = "UTC", **options: Any) -> Any:
    config = Config(id="node-2", name="Format", operation=operation, input=input, **options)
    outcome = await formatter.run(config, make_ctx({"node-1": TRIGGER}, timezone=tz))
    assert outcome.status == "SUCCESS", outcome.error
    return outcome.output["output"]


async def fails(make_ctx: Any, operation: str, input: str, **options: Any) -> str:
    config = Config(id="node-2", name="Format", operation=operation, input=input, **options)
    outcome = await formatter.run(config, make_ctx({"node-1": TRIGGER}))
    assert outcome.status == "ERROR"
    assert outcome.error is not None
    return outcome.error


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        ("text.upper", "  ADA LOVELACE  "),
        ("text.lower", "  ada lovelace  "),
        ("text.title", "  Ada Lovelace  "),
        ("text.capitalize", "  ada LOVELACE  "),
        ("text.trim", "ada LOVELACE"),
    ],
)
async def test_case_and_trim(make_ctx: Any, operation: str, expected: str) -> None:
    assert await fmt(make_ctx, operation) == expected


async def test_title_keeps_apostrophes_inside_words(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "text.title", "don't STOP o'neil") == "Don't Stop O'neil"
    assert await fmt(make_ctx, "text.capitalize", "élan vital") == "Élan vital"


async def test_replace_split_truncate(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "text.replace", "a-b-c", find="-", replace_with="+") == "a+b+c"
    assert await fmt(make_ctx, "text.replace", "a-b", find="-") == "ab"
    assert await fmt(make_ctx, "text.split", "a, b ,c") == ["a", "b", "c"]
    assert await fmt(make_ctx, "text.split", "a|b", separator="|") == ["a", "b"]
    assert await fmt(make_ctx, "text.split", "a\nb", separator="\\n") == ["a", "b"]
    assert await fmt(make_ctx, "text.truncate", "abcdef", max_length=4) == "abcd"
    assert await fmt(make_ctx, "text.truncate", "abcdef", max_length=4, ellipsis=True) == "abc…"
    assert await fmt(make_ctx, "text.truncate", "abc", max_length=4, ellipsis=True) == "abc"
    assert await fmt(make_ctx, "text.truncate", "abc", max_length=0) == ""


async def test_extractors(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "text.extract_email", "{{node-1.note}}") == "ada@example.com"
    assert await fmt(make_ctx, "text.extract_url", "{{node-1.note}}") == "https://example.com/a?b=1"
    assert await fmt(make_ctx, "text.extract_number", "Total: 1,234.50 EUR") == 1234.5
    assert await fmt(make_ctx, "text.extract_number", "-7 items") == -7
    assert await fmt(make_ctx, "text.extract_email", "no address here") == ""
    assert await fmt(make_ctx, "text.extract_number", "none") == ""


async def test_extract_pattern_gives_groups(make_ctx: Any) -> None:
    config = Config(
        id="node-2",
        name="F",
        operation="text.extract_pattern",
        input="Order #A-17 shipped",
        pattern=r"#(?P<id>\w)-(\d+)",
    )
    outcome = await formatter.run(config, make_ctx({}))
    assert outcome.output == {"output": "#A-17", "groups": {"1": "A", "2": "17", "id": "A"}}
    miss = await formatter.run(config.model_copy(update={"input": "nothing"}), make_ctx({}))
    assert miss.output == {"output": "", "groups": {}}


async def test_a_catastrophic_pattern_is_stopped_by_the_timeout(make_ctx: Any) -> None:
    config = Config(id="n", name="F", operation="text.extract_pattern", input="a" * 5000 + "!", pattern=r"(a|aa)+$")
    started = time.monotonic()
    outcome = await formatter.run(config, make_ctx({}))
    assert time.monotonic() - started < 5
    assert outcome.status == "ERROR" and "took longer than" in (outcome.error or "")


def test_invalid_patterns_and_missing_options_are_refused_at_validation() -> None:
    with pytest.raises(ValidationError, match="invalid pattern"):
        Config(id="n", name="F", operation="text.extract_pattern", pattern="(unclosed")
    with pytest.raises(ValidationError, match="needs find"):
        Config(id="n", name="F", operation="text.replace")
    with pytest.raises(ValidationError, match="needs max_length"):
        Config(id="n", name="F", operation="text.truncate")
    with pytest.raises(ValidationError, match="needs operator"):
        Config(id="n", name="F", operation="number.arithmetic", operand="1")
    with pytest.raises(ValidationError, match="unknown currency"):
        Config(id="n", name="F", operation="number.currency", currency="XYZ1")
    with pytest.raises(ValidationError, match="Unknown time zone"):
        Config(id="n", name="F", operation="date.convert_timezone", to_timezone="Mars/Base")
    with pytest.raises(ValidationError, match="Unknown locale"):
        Config(id="n", name="F", operation="number.format", locale="xx_QQ")
    with pytest.raises(ValidationError):
        Config(id="n", name="F", operation="text.nope")  # type: ignore[arg-type]


async def test_url_encoding(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "text.url_encode", "a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9"
    assert await fmt(make_ctx, "text.url_decode", "a%20b+c%26") == "a b c&"


async def test_number_format_and_currency_follow_the_locale(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "number.format", "{{node-1.total}}") == "1,234.5"
    assert await fmt(make_ctx, "number.format", "{{node-1.total}}", locale="de_DE", decimal_places=2) == "1.234,50"
    assert await fmt(make_ctx, "number.format", "2.5", decimal_places=0) == "3"  # half up
    assert await fmt(make_ctx, "number.format", "2.5", decimal_places=0, rounding="half_even") == "2"
    assert await fmt(make_ctx, "number.currency", "{{node-1.total}}", currency="usd") == "$1,234.50"
    assert (
        await fmt(make_ctx, "number.currency", "{{node-1.total}}", currency="EUR", locale="fr_FR")
        == "1\u202f234,50\xa0€"
    )
    assert await fmt(make_ctx, "number.currency", "1000", currency="JPY", locale="ja_JP") == "￥1,000"
    # Text in the locale's own notation is read as a number.
    assert await fmt(make_ctx, "number.format", "{{node-1.price}}", locale="de_DE") == "1.234,5"


async def test_arithmetic_is_exact_decimal(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "number.arithmetic", "0.1", operator="add", operand="0.2") == 0.3
    assert await fmt(make_ctx, "number.arithmetic", "{{node-1.total}}", operator="subtract", operand="0.5") == 1234
    assert await fmt(
        make_ctx, "number.arithmetic", "{{node-1.qty}}", operator="multiply", operand="{{node-1.total}}"
    ) == (3703.5)
    assert await fmt(make_ctx, "number.arithmetic", "10", operator="divide", operand="4") == 2.5
    assert await fmt(make_ctx, "number.arithmetic", "10", operator="divide", operand="3", decimal_places=2) == 3.33
    assert "divide by zero" in await fails(make_ctx, "number.arithmetic", "1", operator="divide", operand="0")
    assert "is not a number" in await fails(make_ctx, "number.arithmetic", "abc", operator="add", operand="1")
    assert "is not a number" in await fails(make_ctx, "number.arithmetic", "NaN", operator="add", operand="1")
    assert "is not a number" in await fails(make_ctx, "number.arithmetic", "1", operator="add", operand="Infinity")


@pytest.mark.parametrize(
    ("value", "places", "mode", "expected"),
    [
        ("2.345", 2, "half_up", 2.35),
        ("2.345", 2, "half_even", 2.34),
        ("2.341", 2, "up", 2.35),
        ("2.349", 2, "down", 2.34),
        ("-2.5", 0, "half_up", -3),
        ("7", None, "half_up", 7),
    ],
)
async def test_rounding(make_ctx: Any, value: str, places: int | None, mode: str, expected: float) -> None:
    assert await fmt(make_ctx, "number.round", value, decimal_places=places, rounding=mode) == expected


async def test_date_format_parses_common_inputs(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "date.format", "2026-11-22 14:05", to_format="yyyy/MM/dd HH:mm") == "2026/11/22 14:05"
    assert await fmt(make_ctx, "date.format", "22 Nov 2026", to_format="date") == "2026-11-22"
    assert await fmt(make_ctx, "date.format", "03/04/2026", to_format="date") == "2026-03-04"
    assert await fmt(make_ctx, "date.format", "03/04/2026", to_format="date", day_first=True) == "2026-04-03"
    assert await fmt(make_ctx, "date.format", "1700000000", to_format="iso") == "2023-11-14T22:13:20+00:00"
    assert await fmt(make_ctx, "date.format", "1700000000000", to_format="unix") == 1700000000
    assert await fmt(make_ctx, "date.format", "2023-11-14T22:13:20Z", to_format="unix_ms") == 1700000000000
    assert (
        await fmt(make_ctx, "date.format", "2026-11-22", to_format="EEEE d MMMM yyyy", locale="de_DE")
        == "Sonntag 22 November 2026"
    )
    assert "is not a date" in await fails(make_ctx, "date.format", "not a date at all", to_format="iso")
    assert "is empty" in await fails(make_ctx, "date.format", "", to_format="iso")


async def test_dates_without_offset_are_in_the_flow_zone(make_ctx: Any) -> None:
    # The flow's zone is Europe/Berlin: 10:00 local is 09:00 UTC in winter.
    got = await fmt(make_ctx, "date.convert_timezone", "2026-01-10 10:00", tz="Europe/Berlin", to_timezone="UTC")
    assert got == "2026-01-10T09:00:00+00:00"
    got = await fmt(make_ctx, "date.convert_timezone", "2026-07-10T10:00:00Z", to_timezone="America/New_York")
    assert got == "2026-07-10T06:00:00-04:00"
    got = await fmt(
        make_ctx, "date.convert_timezone", "2026-07-10 10:00", from_timezone="Asia/Kolkata", to_timezone="Asia/Tokyo"
    )
    assert got == "2026-07-10T13:30:00+09:00"


async def test_dst_spring_forward(make_ctx: Any) -> None:
    ny = {"tz": "America/New_York"}
    # 02:30 does not exist on 2026-03-08 in New York: it moves forward by the gap.
    assert await fmt(make_ctx, "date.format", "2026-03-08 02:30", **ny) == "2026-03-08T03:30:00-04:00"
    # Hours are elapsed time: 01:30 EST + 1 hour = 03:30 EDT.
    assert await fmt(make_ctx, "date.add", "2026-03-08 01:30", amount="1", unit="hours", **ny) == (
        "2026-03-08T03:30:00-04:00"
    )
    # Days are calendar time: the wall clock stays at 12:00 though the day has 23 hours.
    assert await fmt(make_ctx, "date.add", "2026-03-07 12:00", amount="1", unit="days", **ny) == (
        "2026-03-08T12:00:00-04:00"
    )
    assert await fmt(make_ctx, "date.add", "2026-03-07 12:00", amount="24", unit="hours", **ny) == (
        "2026-03-08T13:00:00-04:00"
    )


async def test_dst_fall_back(make_ctx: Any) -> None:
    berlin = {"tz": "Europe/Berlin"}
    # 02:30 exists twice on 2026-10-25 in Berlin: the first one (summer time) is meant.
    assert await fmt(make_ctx, "date.format", "2026-10-25 02:30", **berlin) == "2026-10-25T02:30:00+02:00"
    assert await fmt(make_ctx, "date.add", "2026-10-25 02:30", amount="60", unit="minutes", **berlin) == (
        "2026-10-25T02:30:00+01:00"
    )
    assert await fmt(make_ctx, "date.subtract", "2026-10-26 09:00", amount="1", unit="weeks", **berlin) == (
        "2026-10-19T09:00:00+02:00"
    )


async def test_calendar_months_and_years(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "date.add", "2026-01-31", amount="1", unit="months", to_format="date") == "2026-02-28"
    assert await fmt(make_ctx, "date.add", "2028-02-29", amount="1", unit="years", to_format="date") == "2029-02-28"
    assert await fmt(make_ctx, "date.subtract", "2026-03-31", amount="{{node-1.qty}}", unit="months",
                     to_format="date") == "2025-12-31"  # fmt: skip
    assert "whole number" in await fails(make_ctx, "date.add", "2026-01-01", amount="1.5", unit="days")
    assert "out of range" in await fails(make_ctx, "date.add", "9999-12-31", amount="5", unit="years")


async def test_every_operation_has_a_function_and_records_its_input(make_ctx: Any) -> None:
    assert set(formatter.FUNCTIONS) == set(OPERATIONS) and len(OPERATIONS) == 22
    config = Config(id="n", name="F", operation="text.replace", input="{{node-1.name}}", find="a", replace_with="o")
    outcome = await formatter.run(config, make_ctx({"node-1": TRIGGER}))
    assert outcome.input == {"operation": "text.replace", "input": "  ada LOVELACE  ", "find": "a", "replace_with": "o"}
    missing = await formatter.run(config.model_copy(update={"input": "{{node-9.x}}"}), make_ctx({}))
    assert missing.status == "SUCCESS" and missing.output == {"output": ""}
    assert missing.input["warnings"] == ["Reference {{node-9.x}} not found: used an empty value"]


async def test_non_text_input_reads_as_json(make_ctx: Any) -> None:
    assert await fmt(make_ctx, "text.upper", "{{node-1.items}}") == '["A","B"]'
    assert await fmt(make_ctx, "text.trim", "{{node-1.total}}") == "1234.5"
