"""Delay (in-house add-on, the editor's "Set Delay" timer): the following steps run later.

- ``mode: "for"`` (editor delay_type 515, "Delay for"): wait ``amount`` ``unit``s (editor
  delay_unit Minutes 514, Hours 322, Days 511, Weeks 3228). Minutes and hours are elapsed time;
  days and weeks are calendar steps in the owner's time zone (a 1-day delay started at 09:00
  resumes at 09:00 the next day, also across a DST change; a resume time that falls into a
  spring-forward gap moves forward by the gap, see :mod:`konnectz_contracts.triggers.schedule`).
- ``mode: "until"`` (delay_type 328, "Delay Until"): wait until ``until``, a date and time that
  may carry references (``{{node-1.appointment}}``); without an offset it is read in the owner's
  time zone. A time that has already passed does not wait: the run continues at once and the
  step's output says so.

The step returns :attr:`Outcome.resume_at`; the engine suspends the run and the worker stores its
continuation as a JetStream scheduled message, so the wait survives restarts of the runner and of
NATS (see :mod:`konnectz_runner.bus.timers`). A wait is at most :data:`MAX_DELAY`.

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Delay add-on (provider ``delay``) and Set Delay on any action → the runner's ``delay`` step.

The timer is the node's ``timerConfigs`` (the spec's §3 Delay / timer): ``delay_type`` (Delay for
515, Delay Until 328), ``delay_unit`` (Minutes 514, Hours 322, Days 511, Weeks 3228),
``delay_value`` (a whole number) and ``value`` (the date and time for Delay Until, which may be a
reference). A Set Delay timer on another node compiles to a delay step *before* that node's step,
with the id ``<node id>-delay``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import fail
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "DELAY_TYPE_IDS",
    "KIND",
    "MAX_DELAY",
    "PROVIDERS",
    "UNIT_IDS",
    "Config",
    "DelayStep",
    "compile_node",
    "from_timer_config",
]

KIND = "delay"
ORDER = 9  # its place in the Step union (the CRD's oneOf order)
# The editor's ids (canvas-editor spec): delay_type and delay_unit.
DELAY_TYPE_IDS: dict[int, Literal["for", "until"]] = {515: "for", 328: "until"}
UNIT_IDS: dict[int, Literal["minutes", "hours", "days", "weeks"]] = {
    514: "minutes",
    322: "hours",
    511: "days",
    3228: "weeks",
}
MAX_DELAY = timedelta(days=366)
INTEGER_ONLY = "Please Fill Integer Only"
# A resume closer than this is not worth a suspension: the run just continues.
MIN_SUSPEND = timedelta(seconds=1)


class DelayStep(StepBase):
    """Wait, then run the following steps. ``amount``/``unit`` for ``for``, ``until`` for ``until``."""

    kind: Literal["delay"] = "delay"
    mode: Literal["for", "until"] = "for"
    amount: int | None = Field(default=None, ge=1, le=527_040, description="How many units (mode for)")
    unit: Literal["minutes", "hours", "days", "weeks"] = "minutes"
    until: str | None = Field(default=None, min_length=1, max_length=200, description="Date and time (mode until)")

    @model_validator(mode="after")
    def _complete(self) -> DelayStep:
        if self.mode == "for" and self.amount is None:
            raise ValueError("a delay for a duration needs an amount")
        if self.mode == "until" and not self.until:
            raise ValueError("a delay until a time needs the time")
        return self


Config = DelayStep


def from_timer_config(
    *, id: str, name: str, delay_type: int, delay_unit: int | None = None, delay_value: Any = None, value: Any = None
) -> DelayStep:
    """The step for an editor timer (a node's ``timerConfigs``: delay_type, delay_unit, delay_value, value).

    Raises ValueError (pydantic's ValidationError is one) with the editor's wording for bad input.
    """
    mode = DELAY_TYPE_IDS.get(delay_type)
    if mode is None:
        raise ValueError(f"Unknown delay type {delay_type!r}")
    if mode == "until":
        return DelayStep(id=id, name=name, mode="until", until=str(value or "").strip() or None)
    unit = UNIT_IDS.get(delay_unit) if isinstance(delay_unit, int) else None
    if unit is None:
        raise ValueError(f"Unknown delay unit {delay_unit!r}")
    text = str(delay_value).strip() if delay_value is not None else ""
    if isinstance(delay_value, bool) or not text.isdigit() or not text.isascii():
        raise ValueError(INTEGER_ONLY)
    return DelayStep(id=id, name=name, mode="for", amount=int(text), unit=unit)


PROVIDERS = ("delay", "timer")


def timer_of(node: Node) -> dict[str, Any] | None:
    """The node's timer settings, if it has any (a list holds one)."""
    timer = node.data.timerConfigs
    if isinstance(timer, list):
        timer = timer[0] if timer else None
    return timer if isinstance(timer, dict) and timer else None


def _number(node: Node, value: Any, what: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, dict) and "value" in value:  # a select's {label, value}
        value = value["value"]
    try:
        return int(value)
    except (TypeError, ValueError):
        raise fail(node, f"{what} is not valid") from None


def delay_step(node: Node, timer: dict[str, Any], *, step_id: str) -> DelayStep:
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


def compile_node(node: Node) -> DelayStep:
    timer = timer_of(node)
    if timer is None:
        raise fail(node, "Please fill the values of mandatory fields before Testing")
    return delay_step(node, timer, step_id=node.id)
