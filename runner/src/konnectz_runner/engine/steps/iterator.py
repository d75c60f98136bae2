"""Runs the ``iterator`` step; its config and constants are :mod:`konnectz_contracts.steps.iterator`."""

from __future__ import annotations

import json
from typing import Any

from konnectz_contracts.refs import resolve_value
from konnectz_contracts.steps.iterator import MAX_ITEMS, Config
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.splitter import segments_of

__all__ = ["items_of", "run"]


def items_of(value: Any, separator: str) -> list[dict[str, Any]]:
    """The items of ``value`` as objects (see the module docs)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                value = parsed
    if isinstance(value, dict):
        value = [value]
    elif isinstance(value, str) or value is None:
        value = segments_of(value, separator)
    elif not isinstance(value, list):
        value = [value]
    return [item if isinstance(item, dict) else {"value": item} for item in value]


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    value = resolve_value(config.input, ctx.outputs, warnings)
    recorded: dict[str, Any] = {"input": value}
    if warnings:
        recorded["warnings"] = warnings
    items = items_of(value, config.separator)
    if len(items) > MAX_ITEMS:
        return Outcome.failed(f"The iterator got {len(items)} items; at most {MAX_ITEMS} are allowed", input=recorded)
    return Outcome(output={"count": len(items), "items": items}, input=recorded, items=items)
