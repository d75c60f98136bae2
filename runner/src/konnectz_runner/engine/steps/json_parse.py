"""Runs the ``json_parse`` step; its config is :mod:`konnectz_contracts.steps.json_parse`."""

from __future__ import annotations

import json
from typing import Any

from konnectz_contracts.limits import MAX_JSON_DEPTH, TooDeep, check_depth
from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.json_parse import MAX_TEXT_BYTES, Config
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["run"]

_TYPES: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
}
_SHOWN = 500  # characters of the text the task log shows


def _parse(text: str) -> Any:
    """The parsed value; ValueError saying what is wrong."""
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise ValueError(f"the text is longer than {MAX_TEXT_BYTES // 1024} KiB")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc
    try:
        check_depth(value, MAX_JSON_DEPTH)
    except TooDeep as exc:
        raise ValueError(f"the JSON is nested deeper than {exc.limit} levels") from exc
    return value


async def run(config: Config, ctx: StepContext) -> Outcome:
    text = resolve(config.text, ctx.outputs, ctx.warnings)
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + f"… ({len(text)} characters)"
    recorded = {"text": shown, "on_invalid": config.on_invalid}
    try:
        value = _parse(text)
    except ValueError as exc:
        if config.on_invalid == "error":
            return Outcome.failed(f"JSON Parse: {exc}", input=recorded)
        return Outcome(output={"data": None, "type": None, "valid": False, "error": str(exc)}, input=recorded)
    kind = "null" if value is None else _TYPES.get(type(value), "string")
    return Outcome(output={"data": value, "type": kind, "valid": True}, input=recorded)
