"""Runs the ``join`` step; its config is :mod:`konnectz_contracts.steps.join`.

The engine (:mod:`konnectz_runner.engine`) decides whether the run goes on past the join (its
``wait``) and hands the join the paths' results (``StepContext.path_results``: path name -> the
output of the path's last step, ``{}`` for an empty path, None for a path skipped or stopped);
the join's output is that merge. Test & Review runs a join alone: the api builds the same merge
from the sample outputs with :func:`merge`.
"""

from __future__ import annotations

from typing import Any

from konnectz_contracts.steps.join import Config
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["merge", "run"]


def merge(ends: dict[str, str | None], outputs: dict[str, Any]) -> dict[str, Any]:
    """``{path name: output}`` from each path's last step id (None: an empty path, ``{}``)."""
    return {name: ({} if end is None else outputs.get(end)) for name, end in ends.items()}


async def run(config: Config, ctx: StepContext) -> Outcome:
    recorded: dict[str, Any] = {"router": config.router, "wait": config.wait}
    if ctx.path_results is None:
        return Outcome.failed(f"The join has no paths: router {config.router} did not run before it", input=recorded)
    return Outcome(output=dict(ctx.path_results), input=recorded)
