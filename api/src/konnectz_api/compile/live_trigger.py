"""What the flow lists show of a published flow's trigger: its kind and, for a schedule, when it runs.

Only webhook-like triggers (a Webhook, a form, a catalogue app's webhook) have a URL that starts
runs; a Scheduler flow shows its schedule in words and a polling trigger says that it polls. Read
from the live version (``published_spec.trigger``), not the editor document: a pending draft beside
a live flow does not change what runs.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["WEBHOOK_LIKE", "TriggerKind", "describe_schedule", "live_trigger"]

TriggerKind = Literal["webhook", "form", "schedule", "polling", "flow_failed", "flow_call"]
WEBHOOK_LIKE: frozenset[str] = frozenset({"webhook", "form"})

_SPANS = {"Minutes": "minute", "Hours": "hour", "Days": "day", "Weeks": "week"}


def _wall(value: Any) -> str:
    """A local date and time as stored (2026-06-01T10:23 or with seconds) as ``2026-06-01 10:23``."""
    return str(value or "").replace("T", " ")[:16]


def describe_schedule(schedule: dict[str, Any], timezone: str) -> str:
    """A schedule in words, e.g. ``Every 5 minutes from 2026-06-01 10:23 (Europe/Berlin)``."""
    kind = schedule.get("schedule_type")
    at = str(schedule.get("schedule_time") or "")[:5]
    if kind == "Once":
        text = f"Once, at {_wall(schedule.get('at'))}"
    elif kind == "Everyday":
        text = f"Every day at {at}"
    elif kind == "DaysOfTheWeek":
        text = f"Every {', '.join(str(d) for d in schedule.get('days') or [])} at {at}"
    elif kind == "DaysOfTheMonth":
        text = f"On day {', '.join(str(d) for d in schedule.get('dates') or [])} of the month at {at}"
    elif kind == "AtRegularIntervals":
        every = int(schedule.get("every") or 1)
        unit = _SPANS.get(str(schedule.get("time_span")), "minute")
        text = f"Every {every} {unit}{'' if every == 1 else 's'} from {_wall(schedule.get('start'))}"
    else:
        text = "On a schedule"
    return f"{text} ({timezone})"


def live_trigger(trigger: Any) -> tuple[TriggerKind | None, str | None]:
    """(kind, schedule in words or None) of a published spec's ``trigger``; (None, None) for a draft."""
    if not isinstance(trigger, dict):
        return None, None
    kind = trigger.get("kind")
    if kind == "schedule":
        schedule = trigger.get("schedule")
        return "schedule", describe_schedule(
            schedule if isinstance(schedule, dict) else {}, str(trigger.get("timezone") or "UTC")
        )
    if kind in ("webhook", "form", "polling", "flow_failed", "flow_call"):
        return kind, None
    return None, None
