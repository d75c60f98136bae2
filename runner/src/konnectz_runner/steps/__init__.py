"""Step kinds: one module per kind, looked up by ``kind``.

A kind's module defines:

- ``KIND``: its name (the ``kind`` discriminator of its config),
- ``Config``: its pydantic config model (a :class:`~konnectz_runner.model.StepBase` with
  ``kind: Literal[KIND]``), which is what a :class:`~konnectz_runner.spec.FlowSpec` step holds,
- ``async def run(config, ctx: StepContext) -> Outcome``.

To add a kind: write ``steps/<kind>.py``, add it to :data:`_MODULES` (and so to :data:`Step`),
compile it from canvas_json in the api's compile module, and give the editor its node in
``web/src/editor/nodes/<kind>/``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Annotated, Any

from pydantic import Field

from konnectz_runner.model import Outcome, StepContext
from konnectz_runner.steps import (
    api_call,
    app_event,
    coupon,
    data_forwarder,
    delay,
    filter,
    formatter,
    generator,
    iterator,
    splitter,
)

__all__ = ["KINDS", "Step", "run_step"]

_MODULES: tuple[ModuleType, ...] = (
    api_call,
    formatter,
    splitter,
    iterator,
    generator,
    filter,
    data_forwarder,
    coupon,
    delay,
    app_event,
)

KINDS: dict[str, Callable[[Any, StepContext], Awaitable[Outcome]]] = {m.KIND: m.run for m in _MODULES}

# The union of every kind's Config, discriminated by ``kind``.
Step = Annotated[
    api_call.Config
    | formatter.Config
    | splitter.Config
    | iterator.Config
    | generator.Config
    | filter.Config
    | data_forwarder.Config
    | coupon.Config
    | delay.Config
    | app_event.Config,
    Field(discriminator="kind"),
]


async def run_step(step: Any, ctx: StepContext) -> Outcome:
    """Run ``step`` with the module of its kind."""
    return await KINDS[step.kind](step, ctx)
