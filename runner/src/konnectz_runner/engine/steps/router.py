"""Runs the ``router`` step: which paths run; its config is :mod:`konnectz_contracts.steps.router`.

Each path's conditions are evaluated like a filter's (:func:`konnectz_runner.engine.steps.filter.evaluate`).
The engine (:mod:`konnectz_runner.engine`) then runs the chosen paths concurrently.
"""

from __future__ import annotations

from typing import Any

from konnectz_contracts.steps.router import Config
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.filter import evaluate

__all__ = ["choose", "run"]


def choose(config: Config, outputs: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(the names of the chosen paths in the router's order, one record per path)."""
    records: list[dict[str, Any]] = []
    passed: list[str] = []
    for path in config.paths:
        if path.otherwise:
            records.append({"name": path.name, "otherwise": True})
            continue
        ok, conditions, reason = evaluate(path.conditions, outputs)
        records.append({"name": path.name, "passed": ok, "conditions": conditions, "stopped_by": reason})
        if ok:
            passed.append(path.name)
    if config.mode == "first_match":
        passed = passed[:1]
    otherwise = next((p.name for p in config.paths if p.otherwise), None)
    if not passed and otherwise is not None:
        passed = [otherwise]
    for record in records:
        record["chosen"] = record["name"] in passed
    return passed, records


async def run(config: Config, ctx: StepContext) -> Outcome:
    chosen, records = choose(config, ctx.outputs)
    recorded = {"mode": config.mode, "paths": records}
    output = {"paths": chosen, "mode": config.mode}
    if not chosen:
        return Outcome(output=output, input=recorded, stop="No path's conditions passed")
    return Outcome(output=output, input=recorded)
