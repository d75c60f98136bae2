"""Scheduler trigger (provider ``scheduler``) → the runner's ``schedule`` trigger.

The node's ``selectedValue`` is what the editor sends as ``left_config``: ``schedule_type`` (Once,
Everyday, DaysOfTheWeek, DaysOfTheMonth, AtRegularIntervals) with ``schedule_time``, ``days``,
``dates``, ``every`` and ``time_span``. Times are wall times in the owner's time zone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from konnectz_api.compilers._common import TriggerInput, fail
from konnectz_contracts.timezones import parse_zone
from konnectz_contracts.triggers import ScheduleTrigger
from konnectz_contracts.triggers.schedule import schedule_from_editor

PROVIDERS = ("scheduler", "schedule")


def _values(node: Any) -> dict[str, Any]:
    selected = node.data.selectedValue
    values: dict[str, Any] = selected.model_dump() if selected is not None else {}
    values.update(node.data.selectedAddonsValue or {})
    return values


def compile_trigger(node: Any, given: TriggerInput) -> ScheduleTrigger:
    values = _values(node)
    if not values.get("schedule_type"):
        raise fail(node, "Please fill the values of mandatory fields before Testing")
    now_local = datetime.now(parse_zone(given.timezone)).replace(tzinfo=None)
    try:
        schedule = schedule_from_editor(values, now_local=now_local)
        return ScheduleTrigger(timezone=given.timezone, schedule=schedule)
    except ValueError as exc:  # pydantic's ValidationError is one
        message = str(exc).splitlines()[0] if not hasattr(exc, "errors") else _first(exc)
        raise fail(node, message) from exc


def _first(exc: Any) -> str:
    error = exc.errors()[0]
    loc = ".".join(str(p) for p in error.get("loc", ()))
    msg = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg
