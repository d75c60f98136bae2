"""Runs the ``coupon`` step; its config and constants are :mod:`konnectz_contracts.steps.coupon`."""

from __future__ import annotations

import secrets
from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.steps.coupon import ALPHABET, UNITS, Config
from konnectz_runner.engine import dates
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["new_code", "run"]


def new_code(length: int = 16, prefix: str = "") -> str:
    raw = "".join(secrets.choice(ALPHABET) for _ in range(length))
    grouped = "-".join(raw[i : i + 4] for i in range(0, length, 4))
    return f"{prefix}{grouped}"


async def run(config: Config, ctx: StepContext) -> Outcome:
    recorded: dict[str, Any] = {"expiry_number": config.expiry_number, "expiry_unit": config.expiry_unit}
    try:
        tz = dates.zone(ctx.timezone)
        expires = dates.shift(ctx.now(), config.expiry_number, UNITS[config.expiry_unit], tz)
    except StepError as exc:
        return Outcome.failed(str(exc), input=recorded)
    output = {
        "coupon_code": new_code(config.length, config.prefix),
        "expires_at": expires.isoformat(),
        "expiry_date": expires.date().isoformat(),
        "expiry_number": config.expiry_number,
        "expiry_unit": config.expiry_unit,
    }
    return Outcome(output=output, input=recorded)
