"""Coupon (in-house add-on): a unique coupon code and its expiry.

``expiry_number`` (a whole number ≥ 1; 'Please Fill Valid Expiry Number' otherwise) and
``expiry_unit`` (Days — the default —, Week, Months, Years) give the expiry, counted in calendar
time from the moment the step runs, in the flow's time zone (1 Months from 31 January is the last
day of February).

The code is ``prefix`` plus ``length`` characters (default 16, shown in groups of 4) from a
31-character alphabet without look-alikes (no 0/O, 1/I/L), drawn from the operating system's
secure random source: 16 characters carry 79 bits, so even after a billion codes the chance
that any two are the same is below one in a million. Codes are not stored.

Output: ``{"coupon_code", "expires_at" (ISO 8601 with offset), "expiry_date" (YYYY-MM-DD),
"expiry_number", "expiry_unit"}``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import StepBase

__all__ = ["ALPHABET", "INVALID_EXPIRY", "KIND", "UNITS", "Config"]

KIND = "coupon"
INVALID_EXPIRY = "Please Fill Valid Expiry Number"
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no look-alikes: 0 O 1 I L
ExpiryUnit = Literal["Days", "Week", "Months", "Years"]
UNITS: dict[str, str] = {"Days": "days", "Week": "weeks", "Months": "months", "Years": "years"}


class Config(StepBase):
    kind: Literal["coupon"] = "coupon"
    expiry_number: int = Field(ge=1, le=100_000)
    expiry_unit: ExpiryUnit = "Days"
    prefix: str = Field(default="", max_length=20, pattern=r"^[A-Za-z0-9_-]*$")
    length: int = Field(default=16, ge=8, le=32)
