"""Runs the ``splitter`` step; its config and constants are :mod:`konnectz_contracts.steps.splitter`."""

from __future__ import annotations

import json
from typing import Any

from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps.splitter import Config
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.formatter import unescape

__all__ = ["pick", "run", "segments_of"]

_INDEX = {"First": 0, "Second": 1, "Last": -1, "Second to Last": -2}


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
