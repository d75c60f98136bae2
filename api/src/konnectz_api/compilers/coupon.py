"""Coupon node (provider ``coupon``) → the runner's ``coupon`` step.

``inHouseAppConfig.coupon`` (``expiryNum``, ``duration``) or the fields ``expiry_num`` / ``duration``:
the expiry number must be a whole number ≥ 1 ('Please Fill Valid Expiry Number'; text that is not
a whole number: 'Please Fill Integer Only'); the unit is Days (default), Week, Months or Years.
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import INTEGER_ONLY, config_values, fail, integer, is_blank, validated
from konnectz_contracts.steps import coupon

PROVIDERS = ("coupon",)
INVALID_EXPIRY = coupon.INVALID_EXPIRY


def compile_node(node: Any) -> coupon.Config:
    values = config_values(node)
    config = node.data.inHouseAppConfig.coupon if node.data.inHouseAppConfig is not None else None
    number = config.expiryNum if config is not None and not is_blank(config.expiryNum) else values.get("expiry_num")
    unit = (config.duration if config is not None and config.duration else None) or values.get("duration") or "Days"
    if is_blank(number):
        raise fail(node, INVALID_EXPIRY)
    expiry = integer(node, number, what="Expiry Number", invalid=INTEGER_ONLY)
    if not 1 <= expiry <= 100_000:
        raise fail(node, INVALID_EXPIRY)
    if unit not in coupon.UNITS:
        raise fail(node, f"the expiry unit must be one of {', '.join(coupon.UNITS)}")
    return validated(
        coupon.Config, node, id=node.id, name=node.detail.name or "Coupon", expiry_number=expiry, expiry_unit=unit
    )
