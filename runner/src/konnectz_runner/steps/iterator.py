"""Iterator (in-house add-on): run the following steps once per item of a list.

``input`` usually is one reference to a list (``{{node-1.line_items}}``). Text is read as a JSON
array when it is one, else split at ``separator`` (default ``,``). Each item is what later steps
see under the iterator's node id: an object as is (``{{node-3.sku}}``), anything else as
``{"value": item}`` (``{{node-3.value}}``).

The step's own output (in the task log) is ``{"count": n, "items": [...]}``; the engine then runs
the following steps once per item (:attr:`Outcome.items`), each step's log record carrying its
``item_index`` (0-based). No items: the following steps do not run and the run is SUCCESS.
A flow has at most one iterator ('The iterator can only be used once.').
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from konnectz_runner.model import Outcome, StepBase, StepContext
from konnectz_runner.refs import resolve_value
from konnectz_runner.steps.splitter import segments_of

__all__ = ["KIND", "MAX_ITEMS", "ONLY_ONCE", "Config", "items_of", "run"]

KIND = "iterator"
MAX_ITEMS = 500
ONLY_ONCE = "The iterator can only be used once."


class Config(StepBase):
    kind: Literal["iterator"] = "iterator"
    input: str = Field(min_length=1, description="The list to iterate over; usually one reference")
    separator: str = Field(default=",", min_length=1, max_length=100)


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
