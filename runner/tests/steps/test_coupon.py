"""Coupon: unique codes, expiry in every unit, validation."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.steps.coupon import ALPHABET, Config
from konnectz_runner.engine.steps import coupon
from konnectz_runner.engine.steps.coupon import new_code

NOW = datetime(2026, 1, 31, 23, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("number", "unit", "tz", "expires_at"),
    [
        (3, "Days", "UTC", "2026-02-03T23:30:00+00:00"),
        (2, "Week", "UTC", "2026-02-14T23:30:00+00:00"),
        (1, "Months", "UTC", "2026-02-28T23:30:00+00:00"),  # 31 January + 1 month
        (1, "Years", "UTC", "2027-01-31T23:30:00+00:00"),
        # In the flow's zone it is already 1 February 00:30 in Berlin.
        (1, "Months", "Europe/Berlin", "2026-03-01T00:30:00+01:00"),
    ],
)
async def test_expiry(make_ctx: Any, number: int, unit: str, tz: str, expires_at: str) -> None:
    config = Config(id="node-3", name="Coupon", expiry_number=number, expiry_unit=unit)  # type: ignore[arg-type]
    outcome = await coupon.run(config, make_ctx({}, timezone=tz, now=NOW))
    assert outcome.status == "SUCCESS"
    assert outcome.output["expires_at"] == expires_at
    assert outcome.output["expiry_date"] == expires_at[:10]
    assert outcome.output["expiry_number"] == number and outcome.output["expiry_unit"] == unit


def test_unit_defaults_to_days_and_the_number_must_be_valid() -> None:
    assert Config(id="n", name="C", expiry_number=1).expiry_unit == "Days"
    for bad in (0, -1, "x", None, 1.5):
        with pytest.raises(ValidationError):
            Config(id="n", name="C", expiry_number=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Config(id="n", name="C", expiry_number=1, expiry_unit="Hours")  # type: ignore[arg-type]


async def test_codes_are_unique_and_readable(make_ctx: Any) -> None:
    codes = {new_code() for _ in range(20_000)}
    assert len(codes) == 20_000
    code = next(iter(codes))
    assert re.fullmatch(r"[A-Z0-9]{4}(-[A-Z0-9]{4}){3}", code)
    assert set(code.replace("-", "")) <= set(ALPHABET) and not set("01OIL") & set(code)
    outcome = await coupon.run(Config(id="n", name="C", expiry_number=1, prefix="SALE-", length=8), make_ctx({}))
    assert re.fullmatch(r"SALE-[A-Z0-9]{4}-[A-Z0-9]{4}", outcome.output["coupon_code"])
