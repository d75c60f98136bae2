"""Splitter: every segment, lists, too few segments, separators."""

from __future__ import annotations

from typing import Any

import pytest

from konnectz_contracts.steps.splitter import SEGMENTS, Config
from konnectz_runner.engine.steps import splitter

DATA = {"node-1": {"csv": "red, green ,blue, black", "one": "solo", "tags": ["x", "y", "z"], "empty": ""}}


async def split(make_ctx: Any, segment: str, input: str = "{{node-1.csv}}", **options: Any) -> Any:
    outcome = await splitter.run(Config(id="node-2", name="S", input=input, segment=segment, **options), make_ctx(DATA))
    assert outcome.status == "SUCCESS"
    return outcome


@pytest.mark.parametrize(
    ("segment", "expected"),
    [("First", "red"), ("Second", "green"), ("Last", "black"), ("Second to Last", "blue")],
)
async def test_each_segment(make_ctx: Any, segment: str, expected: str) -> None:
    outcome = await split(make_ctx, segment)
    assert outcome.output == {"output": expected}
    assert "warnings" not in outcome.input


async def test_all_gives_every_trimmed_segment(make_ctx: Any) -> None:
    outcome = await split(make_ctx, "All")
    assert outcome.output == {"output": ["red", "green", "blue", "black"], "count": 4}


def test_default_segment_is_first_and_the_spec_lists_five() -> None:
    assert Config(id="n", name="S").segment == "First"
    assert SEGMENTS == ("First", "Second", "Last", "Second to Last", "All")


@pytest.mark.parametrize(
    ("segment", "expected"),
    [("First", "solo"), ("Second", ""), ("Last", "solo"), ("Second to Last", ""), ("All", ["solo"])],
)
async def test_one_segment_only(make_ctx: Any, segment: str, expected: Any) -> None:
    outcome = await split(make_ctx, segment, "{{node-1.one}}")
    assert outcome.output["output"] == expected
    if expected == "":
        assert "the text has 1 segment(s)" in outcome.input["warnings"][0]


async def test_empty_and_missing_input(make_ctx: Any) -> None:
    assert (await split(make_ctx, "First", "{{node-1.empty}}")).output == {"output": ""}
    assert (await split(make_ctx, "All", "{{node-1.empty}}")).output == {"output": [], "count": 0}
    missing = await split(make_ctx, "First", "{{node-1.nope}}")
    assert missing.output == {"output": ""} and "not found" in missing.input["warnings"][0]


async def test_a_list_is_already_split(make_ctx: Any) -> None:
    assert (await split(make_ctx, "Second to Last", "{{node-1.tags}}")).output == {"output": "y"}


async def test_separators(make_ctx: Any) -> None:
    assert (await split(make_ctx, "Last", "a b  c", separator=" ")).output == {"output": "c"}
    assert (await split(make_ctx, "Second", "l1\nl2\nl3", separator="\\n")).output == {"output": "l2"}
    assert (await split(make_ctx, "All", "a::b", separator="::")).output["output"] == ["a", "b"]
