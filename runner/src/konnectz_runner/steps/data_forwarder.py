"""Data forwarder (in-house add-on): gather values from earlier steps into one object.

``keys`` is a list of key/value rows; each value may carry references (a value that is exactly
one reference keeps its JSON type), dotted keys build nested objects (``customer.name``). The
output is that object, so later steps reference ``{{node-4.customer.name}}``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from konnectz_runner.errors import StepError
from konnectz_runner.model import KeyValue, Outcome, StepBase, StepContext
from konnectz_runner.refs import build_json_body

__all__ = ["KIND", "Config", "run"]

KIND = "data_forwarder"


class Config(StepBase):
    kind: Literal["data_forwarder"] = "data_forwarder"
    keys: list[KeyValue] = Field(min_length=1, max_length=200)


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
