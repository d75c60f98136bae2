"""Step kinds: one module per kind, looked up by ``kind``.

A kind's config (``KIND``, ``Config`` and the :data:`~konnectz_contracts.steps.Step` union) is in
:mod:`konnectz_contracts.steps`; its runner module here defines
``async def run(config, ctx: StepContext) -> Outcome``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from konnectz_contracts.steps import api_call as api_call_config
from konnectz_contracts.steps import app_event as app_event_config
from konnectz_contracts.steps import coupon as coupon_config
from konnectz_contracts.steps import data_forwarder as data_forwarder_config
from konnectz_contracts.steps import delay as delay_config
from konnectz_contracts.steps import filter as filter_config
from konnectz_contracts.steps import formatter as formatter_config
from konnectz_contracts.steps import generator as generator_config
from konnectz_contracts.steps import iterator as iterator_config
from konnectz_contracts.steps import splitter as splitter_config
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

__all__ = ["KINDS", "run_step"]

KINDS: dict[str, Callable[[Any, StepContext], Awaitable[Outcome]]] = {
    api_call_config.KIND: api_call.run,
    formatter_config.KIND: formatter.run,
    splitter_config.KIND: splitter.run,
    iterator_config.KIND: iterator.run,
    generator_config.KIND: generator.run,
    filter_config.KIND: filter.run,
    data_forwarder_config.KIND: data_forwarder.run,
    coupon_config.KIND: coupon.run,
    delay_config.KIND: delay.run,
    app_event_config.KIND: app_event.run,
}


async def run_step(step: Any, ctx: StepContext) -> Outcome:
    """Run ``step`` with the module of its kind."""
    return await KINDS[step.kind](step, ctx)
