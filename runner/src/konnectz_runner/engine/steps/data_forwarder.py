"""Runs the ``data_forwarder`` step; its config and constants are :mod:`konnectz_contracts.steps.data_forwarder`."""

from __future__ import annotations

from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.refs import build_json_body
from konnectz_contracts.steps.data_forwarder import Config
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["run"]


async def run(config: Config, ctx: StepContext) -> Outcome:
    warnings: list[str] = []
    try:
        output = build_json_body(config.keys, ctx.outputs, warnings=warnings)
    except StepError as exc:
        return Outcome.failed(str(exc), input={"keys": [k.key for k in config.keys]})
    recorded: dict[str, Any] = {"keys": [k.key for k in config.keys]}
    if warnings:
        recorded["warnings"] = warnings
    return Outcome(output=output, input=recorded)
