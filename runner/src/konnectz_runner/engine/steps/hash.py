"""Runs the ``hash`` step; its config is :mod:`konnectz_contracts.steps.hash`."""

from __future__ import annotations

import base64
import hashlib

from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.hash import Config
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["run"]


async def run(config: Config, ctx: StepContext) -> Outcome:
    text = resolve(config.text, ctx.outputs, ctx.warnings)
    digest = hashlib.new(config.algorithm, text.encode("utf-8"), usedforsecurity=False).digest()
    value = digest.hex() if config.encoding == "hex" else base64.b64encode(digest).decode("ascii")
    output = {"hash": value, "algorithm": config.algorithm, "encoding": config.encoding, "length": len(text)}
    return Outcome(output=output, input={"text": text, "algorithm": config.algorithm})
