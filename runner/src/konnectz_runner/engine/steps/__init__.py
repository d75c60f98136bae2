"""Step kinds: one module per kind, found by discovery (no list to keep).

A kind's config (``KIND``, ``Config``, its compiler and the :data:`~konnectz_contracts.steps.Step`
union) is in :mod:`konnectz_contracts.steps`; its runner module here, of the same name, defines
``async def run(config, ctx: StepContext) -> Outcome``. :data:`KINDS` maps each kind to its ``run``;
the tests check that every contract kind has exactly one ``run`` and every ``run`` a contract kind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from konnectz_contracts import steps as contracts
from konnectz_contracts.steps import discover
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["KINDS", "MODULES", "run_step"]

Run = Callable[[Any, StepContext], Awaitable[Outcome]]

#: Every kind's runner module, in the union's order of their contract modules (then by name).
MODULES = discover(__name__, __path__)


def _kinds() -> dict[str, Run]:
    by_name = {m.__name__.rsplit(".", 1)[1]: m for m in contracts.MODULES}
    kinds: dict[str, Run] = {}
    for module in MODULES:
        name = module.__name__.rsplit(".", 1)[1]
        if name not in by_name:
            raise RuntimeError(
                f"konnectz_runner.engine.steps.{name} has no contract module konnectz_contracts.steps.{name}"
            )
        kinds[by_name[name].KIND] = module.run
    return {kind: kinds[kind] for kind in (m.KIND for m in contracts.MODULES) if kind in kinds}


#: kind -> its ``run``.
KINDS: dict[str, Run] = _kinds()


async def run_step(step: Any, ctx: StepContext) -> Outcome:
    """Run ``step`` with the module of its kind."""
    return await KINDS[step.kind](step, ctx)
