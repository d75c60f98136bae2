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

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Coupon node (provider ``coupon``) → the runner's ``coupon`` step.

``inHouseAppConfig.coupon`` (``expiryNum``, ``duration``) or the fields ``expiry_num`` / ``duration``:
the expiry number must be a whole number ≥ 1 ('Please Fill Valid Expiry Number'; text that is not
a whole number: 'Please Fill Integer Only'); the unit is Days (default), Week, Months or Years.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import INTEGER_ONLY, Loose, Text, config_values, fail, integer, is_blank, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "ALPHABET",
    "INVALID_EXPIRY",
    "KIND",
    "ORDER",
    "PROVIDERS",
    "UNITS",
    "Config",
    "CouponConfig",
    "compile_node",
]

KIND = "coupon"
ORDER = 8  # its place in the Step union (the CRD's oneOf order)
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


PROVIDERS = ("coupon",)


class CouponConfig(Loose):
    """The node's ``inHouseAppConfig.coupon``, as the editor keeps it (:mod:`konnectz_contracts.canvas`)."""

    expiryNum: Any = None
    duration: Text = ""


def compile_node(node: Node) -> Config:
    values = config_values(node)
    config = node.data.inHouseAppConfig.coupon if node.data.inHouseAppConfig is not None else None
    number = config.expiryNum if config is not None and not is_blank(config.expiryNum) else values.get("expiry_num")
    unit = (config.duration if config is not None and config.duration else None) or values.get("duration") or "Days"
    if is_blank(number):
        raise fail(node, INVALID_EXPIRY)
    expiry = integer(node, number, what="Expiry Number", invalid=INTEGER_ONLY)
    if not 1 <= expiry <= 100_000:
        raise fail(node, INVALID_EXPIRY)
    if unit not in UNITS:
        raise fail(node, f"the expiry unit must be one of {', '.join(UNITS)}")
    return validated(
        Config, node, id=node.id, name=node.detail.name or "Coupon", expiry_number=expiry, expiry_unit=unit
    )
