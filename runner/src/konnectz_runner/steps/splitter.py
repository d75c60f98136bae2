"""Splitter (in-house add-on): split a text into segments and keep one of them, or all.

``input`` (may carry references) is split at ``separator`` (``\\n``, ``\\t`` mean newline and tab);
a value that already is a list is taken as its segments. Each segment is trimmed. ``segment``:

- ``First`` (default), ``Second``, ``Last``, ``Second to Last``: ``{"output": "<segment>"}``; when
  the text has too few segments the output is ``""`` and the task log says so (not an error);
- ``All``: ``{"output": [<segments>], "count": n}``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from konnectz_runner.model import Outcome, StepBase, StepContext
from konnectz_runner.refs import resolve_value
from konnectz_runner.steps.formatter import unescape

__all__ = ["KIND", "SEGMENTS", "Config", "Segment", "pick", "run", "segments_of"]

KIND = "splitter"

Segment = Literal["First", "Second", "Last", "Second to Last", "All"]
SEGMENTS: tuple[str, ...] = ("First", "Second", "Last", "Second to Last", "All")
_INDEX = {"First": 0, "Second": 1, "Last": -1, "Second to Last": -2}


class Config(StepBase):
    kind: Literal["splitter"] = "splitter"
    input: str = Field(default="", description="The text to split; may carry references")
    separator: str = Field(default=",", min_length=1, max_length=100)
    segment: Segment = "First"


def segments_of(value: Any, separator: str) -> list[Any]:
    """The segments of ``value``: a list as is, anything else as text split at ``separator``."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if not text:
        return []
    return [part.strip() for part in text.split(unescape(separator))]


def pick(segments: list[Any], segment: str) -> tuple[Any, str | None]:
    """(the chosen segment, a note when there is none)."""
    if segment == "All":
        return segments, None
    index = _INDEX[segment]
    needed = index + 1 if index >= 0 else -index
    if len(segments) < needed:
        return "", f"{segment} segment: the text has {len(segments)} segment(s), the output is empty"
    return segments[index], None


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    value = resolve_value(config.input, ctx.outputs, warnings)
    segments = segments_of(value, config.separator)
    chosen, note = pick(segments, config.segment)
    recorded: dict[str, Any] = {"input": value, "separator": config.separator, "segment": config.segment}
    if note:
        warnings.append(note)
    if warnings:
        recorded["warnings"] = warnings
    output: dict[str, Any] = {"output": chosen}
    if config.segment == "All":
        output["count"] = len(segments)
    return Outcome(output=output, input=recorded)
