"""Schedule trigger: runs start at times given in the owner's time zone.

The five kinds of the editor (``schedule_type``):

- ``Once``: one local date and time (``at``).
- ``Everyday``: every day at ``schedule_time``.
- ``DaysOfTheWeek``: on the listed ``days`` (Sunday … Saturday) at ``schedule_time``.
- ``DaysOfTheMonth``: on the listed ``dates`` (1 … 31) at ``schedule_time``; a month without that
  date (the 31st in April, the 30th in February) has no run on it, as with cron.
- ``AtRegularIntervals``: every ``every`` ``time_span`` (Minutes, Hours, Days or Weeks), from ``start``
  (a local date and time, the first fire). Minutes and Hours are elapsed time: every 2 hours is
  7,200 s apart, also across a DST change. Days and Weeks are calendar steps at the wall-clock time
  of ``start``: every 3 days at 09:00 stays at 09:00 local when the clocks change.

Times are local wall times (no offset) in ``timezone`` (an IANA name, e.g. ``Europe/Berlin``).
Turning one into an instant follows RFC 5545 §3.3.5 and is explicit in :func:`local_to_utc`:

- a **nonexistent** local time (the clocks spring forward over it, e.g. 02:30 on the last Sunday
  of March in Berlin) is read with the UTC offset in force *before* the gap, so it fires at the
  same distance after the jump: 02:30 → 03:30 CEST. It is not skipped.
- an **ambiguous** local time (the clocks fall back over it, e.g. 02:30 on the last Sunday of
  October in Berlin, or 01:30 in New York) fires once, at its *first* occurrence (the
  daylight-saving one, CEST/EDT). The repeated hour does not fire again.

Pure functions: :func:`next_fire` (the next fire strictly after an instant), :func:`due_fire`
(the fire a tick at ``now`` stands for) and :func:`cron_lines` (the CronJob lines that tick at
least at every fire; a tick decides with :func:`due_fire` whether it is one). Every instant
these return is timezone-aware UTC.

From the canvas (``compile_trigger``, providers in ``PROVIDERS``):
Scheduler trigger (provider ``scheduler``) → the runner's ``schedule`` trigger.

The node's ``selectedValue`` is what the editor sends as ``left_config``: ``schedule_type`` (Once,
Everyday, DaysOfTheWeek, DaysOfTheMonth, AtRegularIntervals) with ``schedule_time``, ``days``,
``dates``, ``every`` and ``time_span``. Times are wall times in the owner's time zone.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from datetime import time as WallTime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from dateutil import parser as date_parser
from dateutil import rrule as rrule_mod
from pydantic import Field, WithJsonSchema, field_validator

from konnectz_contracts.compiling import TriggerInput, fail
from konnectz_contracts.model import Strict
from konnectz_contracts.timezones import cron_zone, parse_zone

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "PROVIDERS",
    "SPANS",
    "WEEKDAYS",
    "AtRegularIntervals",
    "CronLine",
    "DaysOfTheMonth",
    "DaysOfTheWeek",
    "Everyday",
    "Once",
    "Schedule",
    "ScheduleTrigger",
    "compile_trigger",
    "cron_lines",
    "due_fire",
    "fire_run_id",
    "is_fire",
    "local_kind",
    "local_to_utc",
    "next_fire",
    "schedule_from_editor",
    "trigger_output",
]

# A wall time in the trigger's zone, without an offset: not an RFC 3339 date-time, so its JSON
# schema (and the CRD) says string with that shape.
LocalDateTime = Annotated[
    datetime,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$",
            "description": "Local date and time without an offset, e.g. 2026-12-24T18:00",
        }
    ),
]

# Cron numbers the days Sunday = 0 … Saturday = 6, the order the editor lists them in.
WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
Weekday = Literal["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
SPANS = ("Minutes", "Hours", "Days", "Weeks")
Span = Literal["Minutes", "Hours", "Days", "Weeks"]
MAX_EVERY = 1000
UTC_ZONE = "Etc/UTC"
# How far ahead cron_lines looks for DST gaps that move a wall time to another hour or minute.
_GAP_SCAN_YEARS = 3
_RUN_ID_NAMESPACE = uuid.UUID("9b7d1f5e-3c55-4f0e-9d8e-6a7c1f2b4e10")


def _whole_minute(value: WallTime | datetime, what: str) -> None:
    if value.second or value.microsecond:
        raise ValueError(f"{what} must be a whole minute (schedules run at minute precision)")
    if value.tzinfo is not None:
        raise ValueError(f"{what} is a local time: give it without an offset (the trigger's timezone applies)")


class Once(Strict):
    """One run at the local date and time ``at``."""

    schedule_type: Literal["Once"] = "Once"
    at: LocalDateTime = Field(description="Local date and time, e.g. 2026-12-24T18:00")

    @field_validator("at")
    @classmethod
    def _minute(cls, value: datetime) -> datetime:
        _whole_minute(value, "at")
        return value


class _AtTime(Strict):
    schedule_time: WallTime = Field(description="Local wall time, e.g. 09:30")

    @field_validator("schedule_time")
    @classmethod
    def _minute(cls, value: WallTime) -> WallTime:
        _whole_minute(value, "schedule_time")
        return value


class Everyday(_AtTime):
    """Every day at ``schedule_time``."""

    schedule_type: Literal["Everyday"] = "Everyday"


class DaysOfTheWeek(_AtTime):
    """On each of ``days`` at ``schedule_time``."""

    schedule_type: Literal["DaysOfTheWeek"] = "DaysOfTheWeek"
    days: list[Weekday] = Field(min_length=1, max_length=7)

    @field_validator("days")
    @classmethod
    def _ordered(cls, value: list[str]) -> list[str]:
        return sorted(set(value), key=WEEKDAYS.index)


class DaysOfTheMonth(_AtTime):
    """On each of ``dates`` (days of the month) at ``schedule_time``; months without a date skip it."""

    schedule_type: Literal["DaysOfTheMonth"] = "DaysOfTheMonth"
    dates: list[Annotated[int, Field(ge=1, le=31)]] = Field(min_length=1, max_length=31)

    @field_validator("dates")
    @classmethod
    def _ordered(cls, value: list[int]) -> list[int]:
        return sorted(set(value))


class AtRegularIntervals(Strict):
    """Every ``every`` ``time_span``s from ``start`` (the first fire, a local date and time)."""

    schedule_type: Literal["AtRegularIntervals"] = "AtRegularIntervals"
    every: int = Field(ge=1, le=MAX_EVERY)
    time_span: Span
    start: LocalDateTime = Field(description="Local date and time of the first run; Days/Weeks keep its wall time")

    @field_validator("start")
    @classmethod
    def _minute(cls, value: datetime) -> datetime:
        _whole_minute(value, "start")
        return value


Schedule = Annotated[
    Once | Everyday | DaysOfTheWeek | DaysOfTheMonth | AtRegularIntervals, Field(discriminator="schedule_type")
]


class ScheduleTrigger(Strict):
    """Runs start on a schedule in ``timezone``; see the module documentation for DST rules."""

    kind: Literal["schedule"] = "schedule"
    timezone: str = Field(
        default="UTC", max_length=64, description="IANA time zone (Europe/Berlin) or a GMT offset (GMT+05:30)"
    )
    schedule: Schedule

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        parse_zone(value)  # ValueError says why
        return value

    @property
    def zone(self) -> tzinfo:
        return parse_zone(self.timezone)


# --- local wall time -> instant (the DST rules) -------------------------------------------------


def local_kind(wall: datetime, zone: tzinfo) -> Literal["normal", "ambiguous", "nonexistent"]:
    """Whether the naive local ``wall`` time occurs once, twice (fall back) or never (spring forward)."""
    early = wall.replace(tzinfo=zone, fold=0)
    late = wall.replace(tzinfo=zone, fold=1)
    if early.utcoffset() == late.utcoffset():
        return "normal"
    # The offsets differ around a transition: the time exists twice if both readings map back to it.
    round_trip = early.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    return "ambiguous" if round_trip == wall else "nonexistent"


def local_to_utc(wall: datetime, zone: tzinfo) -> datetime:
    """The instant of the naive local time ``wall`` in ``zone`` (RFC 5545 §3.3.5).

    - normal: the one instant;
    - ambiguous (fall back): the first occurrence, i.e. the earlier instant (``fold=0``);
    - nonexistent (spring forward): read with the offset before the gap, i.e. moved forward by the
      length of the gap (02:30 in a 02:00→03:00 gap is 03:30 after it). ``fold=0`` reads a time in a
      gap with the pre-transition offset (PEP 495), which is exactly this rule.
    """
    if wall.tzinfo is not None:
        raise ValueError("local_to_utc takes a naive local time")
    kind = local_kind(wall, zone)
    if kind == "ambiguous":
        return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if kind == "nonexistent":
        before_gap = wall.replace(tzinfo=zone, fold=0).utcoffset()
        assert before_gap is not None
        return (wall - before_gap).replace(tzinfo=UTC)
    return wall.replace(tzinfo=zone).astimezone(UTC)


# --- next fire --------------------------------------------------------------------------------


def _aware(instant: datetime, name: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware")
    return instant.astimezone(UTC)


def _day_matches(schedule: Everyday | DaysOfTheWeek | DaysOfTheMonth, day: date) -> bool:
    if isinstance(schedule, Everyday):
        return True
    if isinstance(schedule, DaysOfTheWeek):
        return WEEKDAYS[(day.weekday() + 1) % 7] in schedule.days
    return day.day in schedule.dates


def _period(schedule: AtRegularIntervals) -> timedelta:
    unit = {"Minutes": timedelta(minutes=1), "Hours": timedelta(hours=1)}.get(schedule.time_span)
    if unit is not None:
        return unit * schedule.every
    return timedelta(days=schedule.every * (7 if schedule.time_span == "Weeks" else 1))


# dateutil weekday constants in the editor's order (Sunday first).
_RRULE_DAYS = (rrule_mod.SU, rrule_mod.MO, rrule_mod.TU, rrule_mod.WE, rrule_mod.TH, rrule_mod.FR, rrule_mod.SA)


def _wall_rule(schedule: Schedule, near: datetime) -> rrule_mod.rrule:
    """The RFC 5545 recurrence (dateutil.rrule) of the schedule's local wall times.

    Calendar kinds start a few days before ``near`` (a naive local time) so the rule stays short.
    """
    if isinstance(schedule, Once):
        return rrule_mod.rrule(rrule_mod.DAILY, dtstart=schedule.at, count=1)
    if isinstance(schedule, AtRegularIntervals):  # Days or Weeks, anchored at start
        if schedule.time_span == "Weeks":
            return rrule_mod.rrule(rrule_mod.WEEKLY, dtstart=schedule.start, interval=schedule.every)
        return rrule_mod.rrule(rrule_mod.DAILY, dtstart=schedule.start, interval=schedule.every)
    begin = datetime.combine(near.date() - timedelta(days=2), schedule.schedule_time)
    if isinstance(schedule, Everyday):
        return rrule_mod.rrule(rrule_mod.DAILY, dtstart=begin)
    if isinstance(schedule, DaysOfTheWeek):
        days = [_RRULE_DAYS[WEEKDAYS.index(d)] for d in schedule.days]
        return rrule_mod.rrule(rrule_mod.WEEKLY, dtstart=begin, byweekday=days)
    # Months without a listed date (the 31st in April) are skipped: RFC 5545 ignores invalid dates.
    return rrule_mod.rrule(rrule_mod.MONTHLY, dtstart=begin, bymonthday=schedule.dates)


def next_fire(trigger: ScheduleTrigger, after: datetime) -> datetime | None:
    """The first fire strictly after ``after`` (aware), in UTC; None when there is none (a past Once)."""
    after = _aware(after, "after")
    zone = trigger.zone
    schedule = trigger.schedule
    if isinstance(schedule, AtRegularIntervals) and schedule.time_span in ("Minutes", "Hours"):
        period = _period(schedule)  # elapsed time from the first fire
        first = local_to_utc(schedule.start, zone)
        if after < first:
            return first
        return first + period * ((after - first) // period + 1)
    # Wall times from a day before ``after`` (a local time maps to an instant within +-1 day).
    near = after.astimezone(zone).replace(tzinfo=None)
    rule = _wall_rule(schedule, near)
    wall = rule.after(near - timedelta(days=1), inc=True)
    while wall is not None:
        fire = local_to_utc(wall, zone)
        if fire > after:
            return fire
        wall = rule.after(wall)
    return None


def is_fire(trigger: ScheduleTrigger, instant: datetime) -> bool:
    """Whether ``instant`` is one of the trigger's fire times (a run for another is stale)."""
    instant = _aware(instant, "instant")
    return next_fire(trigger, instant - timedelta(microseconds=1)) == instant


def due_fire(
    trigger: ScheduleTrigger, now: datetime, *, grace: timedelta, last_fire: datetime | None = None
) -> datetime | None:
    """The fire a tick at ``now`` should start: the latest fire in ``(now - grace, now]`` after ``last_fire``.

    Several fires in the window (a tick that started late) coalesce into the latest one. None when
    nothing is due, e.g. a CronJob tick at a finer cron than the interval between two fires.
    """
    now = _aware(now, "now")
    low = now - grace
    if last_fire is not None:
        low = max(low, _aware(last_fire, "last_fire"))
    due: datetime | None = None
    fire = next_fire(trigger, low)
    while fire is not None and fire <= now:
        due = fire
        fire = next_fire(trigger, fire)
    return due


def fire_run_id(konnect_id: int, fire: datetime) -> str:
    """The run id of a konnect's fire: the same for every process that computes it (dedupes runs)."""
    stamp = _aware(fire, "fire").strftime("%Y-%m-%dT%H:%M:%SZ")
    return uuid.uuid5(_RUN_ID_NAMESPACE, f"schedule:{int(konnect_id)}:{stamp}").hex


def trigger_output(trigger: ScheduleTrigger, fire: datetime) -> dict[str, Any]:
    """What a scheduled run's trigger node outputs (referenced as ``{{node-1.scheduled_at}}`` …)."""
    fire = _aware(fire, "fire")
    local = fire.astimezone(trigger.zone)
    return {
        "scheduled_at": fire.isoformat().replace("+00:00", "Z"),
        "local_time": local.isoformat(),
        "timezone": trigger.timezone,
        "schedule_type": trigger.schedule.schedule_type,
    }


# --- cron lines for Kubernetes CronJobs ----------------------------------------------------------


@dataclass(frozen=True)
class CronLine:
    """One CronJob ``schedule`` with its ``timeZone``.

    ``exact`` is True when every tick is a fire (DST days aside). Otherwise the CronJob ticks more often than the
    trigger fires and ``tick`` starts a run only when :func:`due_fire` finds one.
    """

    schedule: str
    time_zone: str
    exact: bool


def _field(values: set[int]) -> str:
    return ",".join(str(v) for v in sorted(values))


def _wall_times(zone: tzinfo, at: WallTime, days: list[date]) -> tuple[set[int], set[int]]:
    """Minutes and hours a wall time ``at`` can fire at on ``days``, DST gaps included.

    A time in a spring-forward gap fires after the gap (02:30 → 03:30); the CronJob must tick then
    too, because the cron library of Kubernetes skips a wall time that does not exist.
    """
    minutes, hours = {at.minute}, {at.hour}
    for day in days:
        wall = datetime.combine(day, at)
        if local_kind(wall, zone) == "nonexistent":
            moved = local_to_utc(wall, zone).astimezone(zone)
            minutes.add(moved.minute)
            hours.add(moved.hour)
    return minutes, hours


def _scan_days(today: date) -> list[date]:
    return [today + timedelta(days=i) for i in range(366 * _GAP_SCAN_YEARS)]


def cron_lines(trigger: ScheduleTrigger, *, today: date | None = None) -> list[CronLine]:
    """CronJob lines (five-field cron + time zone) that tick at least at every fire of ``trigger``.

    - Calendar kinds (Once, Everyday, DaysOfTheWeek, DaysOfTheMonth, every N Days/Weeks) tick at
      the wall time in the trigger's time zone, plus the hour a DST gap moves it to (``30 2,3 * * *``
      in Europe/Berlin). Every N days/weeks ticks daily/weekly; Once ticks yearly on its date.
    - Every N Minutes/Hours is elapsed time, so it ticks in UTC: ``*/N`` when N divides 60 (24),
      otherwise every gcd(N, 60) minutes (gcd(N, 24) hours) from the start's phase, e.g. every
      7 minutes ticks every minute and every 45 minutes ticks at :00, :15, :30 and :45.

    ``tick`` then starts a run only for a real fire (:func:`due_fire`), so the interval is exact.
    ``today`` (default: the current UTC date) starts the scan for DST gaps, three years long.
    """
    zone = trigger.zone
    schedule = trigger.schedule
    today = today or datetime.now(UTC).date()
    if isinstance(schedule, AtRegularIntervals) and schedule.time_span in ("Minutes", "Hours"):
        first = local_to_utc(schedule.start, zone)
        if schedule.time_span == "Minutes":
            step = math.gcd(schedule.every, 60)
            minute = "*" if step == 1 else str(first.minute) if step == 60 else f"{first.minute % step}-59/{step}"
            return [CronLine(f"{minute} * * * *", UTC_ZONE, exact=60 % schedule.every == 0)]
        step = math.gcd(schedule.every, 24)
        hour = "*" if step == 1 else str(first.hour) if step == 24 else f"{first.hour % step}-23/{step}"
        return [CronLine(f"{first.minute} {hour} * * *", UTC_ZONE, exact=24 % schedule.every == 0)]
    named = cron_zone(trigger.timezone)
    if named is None:
        # A GMT offset with minutes (GMT+05:30) has no tz database name for the CronJob: a fixed
        # offset has no DST, so the wall time is one UTC minute; tick at it hourly in UTC, and
        # ``tick`` starts a run only for a real fire.
        if isinstance(schedule, Once):
            at = schedule.at.time()
        elif isinstance(schedule, AtRegularIntervals):
            at = schedule.start.time()
        else:
            at = schedule.schedule_time
        utc_minute = local_to_utc(datetime.combine(today, at), zone).minute
        return [CronLine(f"{utc_minute} * * * *", UTC_ZONE, exact=False)]
    if isinstance(schedule, Once):
        minutes, hours = _wall_times(zone, schedule.at.time(), [schedule.at.date()])
        line = f"{_field(minutes)} {_field(hours)} {schedule.at.day} {schedule.at.month} *"
        # Cron has no year: the line ticks yearly, and only the tick in the right year is due.
        return [CronLine(line, named, exact=False)]
    if isinstance(schedule, AtRegularIntervals):  # Days or Weeks
        minutes, hours = _wall_times(zone, schedule.start.time(), _scan_days(today))
        weekday = "*"
        if schedule.time_span == "Weeks":
            weekday = str((schedule.start.weekday() + 1) % 7)
        exact = schedule.every == 1 and len(minutes) == len(hours) == 1
        return [CronLine(f"{_field(minutes)} {_field(hours)} * * {weekday}", named, exact=exact)]
    days = [d for d in _scan_days(today) if _day_matches(schedule, d)]
    minutes, hours = _wall_times(zone, schedule.schedule_time, days)
    day_of_month, day_of_week = "*", "*"
    if isinstance(schedule, DaysOfTheWeek):
        day_of_week = _field({WEEKDAYS.index(d) for d in schedule.days})
    elif isinstance(schedule, DaysOfTheMonth):
        day_of_month = _field(set(schedule.dates))
    exact = len(minutes) == len(hours) == 1
    return [CronLine(f"{_field(minutes)} {_field(hours)} {day_of_month} * {day_of_week}", named, exact)]


# --- the editor's Scheduler values -> a schedule ----------------------------------------------------

_SPAN_NAMES = {s.lower(): s for s in SPANS}
_DAY_NAMES = {**{d.lower(): d for d in WEEKDAYS}, **{d[:3].lower(): d for d in WEEKDAYS}}


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        raise ValueError(f"Scheduler: {what} is missing")
    text = str(value).strip()
    if len(text) > 64 or "\x00" in text:
        raise ValueError(f"Scheduler: {what} is not valid")
    return text


def _local(value: Any, what: str, *, default_day: date | None = None) -> datetime:
    """A naive local date and time from the editor's text ("2026-12-24 18:00", "18:00", "6:00 PM")."""
    text = _text(value, what)
    base = datetime.combine(default_day or date(2000, 1, 1), WallTime())
    try:
        parsed = date_parser.parse(text, default=base)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"Scheduler: {what} {text!r} is not a date and time") from exc
    return parsed.replace(tzinfo=None, second=0, microsecond=0)


def _whole(value: Any, what: str) -> int:
    text = _text(value, what)
    if not text.isascii() or not text.isdigit():
        raise ValueError("Please Fill Integer Only")
    return int(text)


def schedule_from_editor(value: dict[str, Any], *, now_local: datetime) -> Schedule:
    """The schedule for the editor's Scheduler ``selectedValue`` (the left_config a trigger test sends).

    Keys: ``schedule_type``; ``schedule_time`` (a time, or a date and time for Once; ``date`` and
    ``time`` are accepted too); ``days`` (names, or their first three letters); ``dates`` (1 … 31);
    ``every`` and ``time_span`` (or ``interval``). At regular intervals starts at ``schedule_time``
    when given (a time alone means today), else at ``now_local`` (the publishing minute in the
    konnect's time zone). Raises ValueError (pydantic's ValidationError is one) with a message.
    """
    kind = value.get("schedule_type")
    when = value.get("schedule_time")
    if when is None and value.get("time") is not None:
        when = f"{value.get('date') or ''} {value['time']}".strip()
    today = now_local.date()
    if kind == "Once":
        return Once(at=_local(when, "the date and time", default_day=today))
    if kind in ("Everyday", "DaysOfTheWeek", "DaysOfTheMonth"):
        at = _local(when, "the time").time()
        if kind == "Everyday":
            return Everyday(schedule_time=at)
        if kind == "DaysOfTheWeek":
            raw_days = value.get("days")
            if not isinstance(raw_days, list) or not raw_days:
                raise ValueError("Scheduler: choose the days of the week")
            days = [_DAY_NAMES.get(_text(d, "a day").lower()) for d in raw_days[:7]]
            if None in days:
                raise ValueError("Scheduler: a day of the week is not valid")
            return DaysOfTheWeek.model_validate({"days": days, "schedule_time": at})
        raw_dates = value.get("dates")
        if not isinstance(raw_dates, list) or not raw_dates:
            raise ValueError("Scheduler: choose the days of the month")
        return DaysOfTheMonth(schedule_time=at, dates=[_whole(d, "a date") for d in raw_dates[:31]])
    if kind == "AtRegularIntervals":
        span = _SPAN_NAMES.get(_text(value.get("time_span") or value.get("interval"), "the interval").lower())
        if span is None:
            raise ValueError("Scheduler: the interval must be Minutes, Hours, Days or Weeks")
        start = _local(when, "the start", default_day=today) if when else now_local.replace(second=0, microsecond=0)
        return AtRegularIntervals.model_validate(
            {"every": _whole(value.get("every"), "every"), "time_span": span, "start": start.replace(tzinfo=None)}
        )
    raise ValueError(f"Scheduler: unknown schedule type {kind!r}")


PROVIDERS = ("scheduler", "schedule")


def _values(node: Node) -> dict[str, Any]:
    selected = node.data.selectedValue
    values: dict[str, Any] = selected.model_dump() if selected is not None else {}
    values.update(node.data.selectedAddonsValue or {})
    return values


def compile_trigger(node: Node, given: TriggerInput) -> ScheduleTrigger:
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


#: This kind's model in the :data:`~konnectz_contracts.triggers.Trigger` union, at place ``ORDER``.
MODEL = ScheduleTrigger
ORDER = 2
