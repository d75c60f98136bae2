"""Delay add-on (provider ``delay``) and Set Delay on any action → the runner's ``delay`` step.

The timer is the node's ``timerConfigs`` (the spec's §3 Delay / timer): ``delay_type`` (Delay for
515, Delay Until 328), ``delay_unit`` (Minutes 514, Hours 322, Days 511, Weeks 3228),
``delay_value`` (a whole number) and ``value`` (the date and time for Delay Until, which may be a
reference). A Set Delay timer on another node compiles to a delay step *before* that node's step,
with the id ``<node id>-delay``.
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import fail
from konnectz_contracts.steps.delay import DelayStep, from_timer_config

PROVIDERS = ("delay", "timer")


def timer_of(node: Any) -> dict[str, Any] | None:
    """The node's timer settings, if it has any (a list holds one)."""
    timer = node.data.timerConfigs
    if isinstance(timer, list):
        timer = timer[0] if timer else None
    return timer if isinstance(timer, dict) and timer else None


def _number(node: Any, value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, dict) and "value" in value:  # a select's {label, value}
        value = value["value"]
    try:
        return int(value)
    except (TypeError, ValueError):
        raise fail(node, f"{what} is not valid") from None


def delay_step(node: Any, timer: dict[str, Any], *, step_id: str) -> DelayStep:
    delay_type = _number(node, timer.get("delay_type"), "The delay type")
    if delay_type is None:
        raise fail(node, "Please fill the values of mandatory fields before Testing")
    try:
        return from_timer_config(
            id=step_id,
            name=(node.detail.name.strip() or "Delay") if step_id == node.id else f"Delay before {node.detail.name}",
            delay_type=delay_type,
            delay_unit=_number(node, timer.get("delay_unit"), "The delay unit"),
            delay_value=timer.get("delay_value"),
            value=timer.get("value"),
        )
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        message = str(errors()[0].get("msg", exc)).removeprefix("Value error, ") if errors else str(exc)
        raise fail(node, message) from exc


def compile_node(node: Any) -> DelayStep:
    timer = timer_of(node)
    if timer is None:
        raise fail(node, "Please fill the values of mandatory fields before Testing")
    return delay_step(node, timer, step_id=node.id)
