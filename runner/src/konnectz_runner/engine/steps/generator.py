"""Runs the ``generator`` step; its config and constants are :mod:`konnectz_contracts.steps.generator`."""

from __future__ import annotations

import secrets
import time
import uuid
from decimal import Decimal
from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.steps.generator import CHARSETS, Config
from konnectz_runner.engine import dates
from konnectz_runner.engine.context import Outcome, StepContext
from konnectz_runner.engine.steps.formatter import number_value

__all__ = ["generate", "run", "uuid7"]


def uuid7(now_ms: int | None = None) -> uuid.UUID:
    """A version 7 UUID (RFC 9562 §5.7): 48-bit Unix milliseconds, then 74 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms & ((1 << 48) - 1)) << 80 | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # variant 10
    return uuid.UUID(int=value)


def _random_number(config: Config) -> int | float:
    scale = 10**config.decimal_places
    low = Decimal(str(config.min)) * scale
    high = Decimal(str(config.max)) * scale
    low_int, high_int = int(low.to_integral_value(rounding="ROUND_CEILING")), int(high.to_integral_value("ROUND_FLOOR"))
    if low_int > high_int:
        raise StepError(f"No number with {config.decimal_places} decimal places lies between min and max")
    picked = Decimal(low_int + secrets.randbelow(high_int - low_int + 1)) / scale
    return number_value(picked)


def _random_string(length: int, charset: str) -> str:
    return "".join(secrets.choice(charset) for _ in range(length))


def _one(kind: str, config: Config) -> Any:
    if kind == "uuid4":
        return str(uuid.uuid4())
    if kind == "uuid7":
        return str(uuid7())
    if kind == "nanoid":
        return _random_string(config.length, CHARSETS["url_safe"])
    if kind == "random_number":
        return _random_number(config)
    return _random_string(config.length, CHARSETS[config.charset])


def generate(config: Config, ctx: StepContext) -> dict[str, Any]:
    """The output of ``config``; raises StepError."""
    if config.what == "date":
        tz = dates.zone(config.timezone or ctx.timezone)
        moment = dates.shift(ctx.now(), config.amount, config.unit, tz)
        return {"output": dates.format_date(moment, config.to_format, tz, config.locale)}
    if config.what == "list":
        values = [_one(config.item, config) for _ in range(config.count)]
        return {"output": values, "count": len(values)}
    if config.what == "sequence":
        start, step = Decimal(str(config.start)), Decimal(str(config.step))
        values = [number_value(start + step * i) for i in range(config.count)]
        return {"output": values, "count": len(values)}
    return {"output": _one(config.what, config)}


async def run(config: Config, ctx: StepContext) -> Outcome:
    recorded: dict[str, Any] = {"what": config.what}
    try:
        output = generate(config, ctx)
    except StepError as exc:
        return Outcome.failed(str(exc), input=recorded)
    return Outcome(output=output, input=recorded)
