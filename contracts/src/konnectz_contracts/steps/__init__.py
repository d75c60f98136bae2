"""Step kinds' configs: one module per kind, looked up by ``kind``.

A kind's module defines:

- ``KIND``: its name (the ``kind`` discriminator of its config),
- ``Config``: its pydantic config model (a :class:`~konnectz_contracts.model.StepBase` with
  ``kind: Literal[KIND]``), which is what a :class:`~konnectz_contracts.spec.FlowSpec` step holds,
- the constants the api's compilers and the runner share.

The kind's ``async def run(config, ctx) -> Outcome`` is the runner's: ``konnectz_runner/steps/<kind>.py``.

To add a kind: write ``steps/<kind>.py`` here (add its Config to :data:`Step`) and its ``run`` in
the runner (add it to the runner's ``KINDS``), compile it from canvas_json in the api's compile
module, and give the editor its node in ``web/src/editor/nodes/<kind>/``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from konnectz_contracts.steps import (
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

__all__ = ["Step"]

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
