"""Generator: ids, random numbers and strings, dates, lists, sequences."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.steps.generator import CHARSETS, Config
from konnectz_runner.engine.steps import generator
from konnectz_runner.engine.steps.generator import uuid7

NOW = datetime(2026, 3, 7, 17, 30, tzinfo=UTC)


async def gen(make_ctx: Any, what: str, *, tz: str = "UTC", **options: Any) -> Any:
    outcome = await generator.run(
        Config(id="node-2", name="G", what=what, **options), make_ctx({}, timezone=tz, now=NOW)
    )
    assert outcome.status == "SUCCESS", outcome.error
    return outcome.output


async def test_uuids(make_ctx: Any) -> None:
    v4 = uuid.UUID((await gen(make_ctx, "uuid4"))["output"])
    assert v4.version == 4
    v7 = uuid.UUID((await gen(make_ctx, "uuid7"))["output"])
    assert v7.version == 7 and v7.variant == uuid.RFC_4122


def test_uuid7_is_time_ordered_and_carries_the_time() -> None:
    earlier, later = uuid7(1_700_000_000_000), uuid7(1_700_000_000_001)
    assert earlier < later
    assert earlier.int >> 80 == 1_700_000_000_000
    assert len({uuid7(5) for _ in range(1000)}) == 1000  # random bits differ within one millisecond


async def test_nanoid_and_random_strings(make_ctx: Any) -> None:
    nano = (await gen(make_ctx, "nanoid"))["output"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{21}", nano)
    assert len((await gen(make_ctx, "nanoid", length=8))["output"]) == 8
    for charset, alphabet in CHARSETS.items():
        value = (await gen(make_ctx, "random_string", length=64, charset=charset))["output"]
        assert len(value) == 64 and set(value) <= set(alphabet), charset
    values = {(await gen(make_ctx, "random_string", length=16))["output"] for _ in range(50)}
    assert len(values) == 50


async def test_random_numbers_stay_in_range(make_ctx: Any) -> None:
    ints = [(await gen(make_ctx, "random_number", min=1, max=6))["output"] for _ in range(300)]
    assert set(ints) == {1, 2, 3, 4, 5, 6}  # all faces show up in 300 throws (p of a miss < 1e-20)
    assert all(isinstance(v, int) for v in ints)
    floats = [(await gen(make_ctx, "random_number", min=0.5, max=0.7, decimal_places=2))["output"] for _ in range(100)]
    assert all(0.5 <= v <= 0.7 and round(v, 2) == v for v in floats)
    assert (await gen(make_ctx, "random_number", min=3, max=3))["output"] == 3
    outcome = await generator.run(
        Config(id="n", name="G", what="random_number", min=0.1, max=0.2, decimal_places=0), make_ctx({})
    )
    assert outcome.status == "ERROR" and "No number" in (outcome.error or "")
    with pytest.raises(ValidationError, match="min must not be greater"):
        Config(id="n", name="G", what="random_number", min=5, max=1)


async def test_dates_from_now(make_ctx: Any) -> None:
    assert (await gen(make_ctx, "date"))["output"] == "2026-03-07T17:30:00+00:00"
    got = await gen(make_ctx, "date", amount=1, unit="days", tz="America/New_York")
    assert got["output"] == "2026-03-08T12:30:00-04:00"  # wall clock kept across the DST change
    assert (await gen(make_ctx, "date", amount=-2, unit="hours", to_format="HH:mm"))["output"] == "15:30"
    assert (await gen(make_ctx, "date", to_format="unix"))["output"] == int(NOW.timestamp())


async def test_lists_and_sequences(make_ctx: Any) -> None:
    listed = await gen(make_ctx, "list", count=5, item="uuid7")
    assert listed["count"] == 5 and len(set(listed["output"])) == 5
    assert all(uuid.UUID(v).version == 7 for v in listed["output"])
    numbers = await gen(make_ctx, "list", count=3, item="random_number", min=1, max=2)
    assert all(v in (1, 2) for v in numbers["output"])
    assert (await gen(make_ctx, "sequence", count=4))["output"] == [1, 2, 3, 4]
    assert (await gen(make_ctx, "sequence", count=3, start=10, step=-2.5))["output"] == [10, 7.5, 5]
    with pytest.raises(ValidationError):
        Config(id="n", name="G", what="list", count=1001)
