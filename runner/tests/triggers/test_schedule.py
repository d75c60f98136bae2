"""The five schedule kinds in a time zone, across DST changes (Europe/Berlin, America/New_York)."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from konnectz_contracts.spec import FlowSpec, ScheduleTrigger
from konnectz_contracts.triggers.schedule import (
    CronLine,
    cron_lines,
    due_fire,
    fire_run_id,
    is_fire,
    local_kind,
    next_fire,
    schedule_from_editor,
    trigger_output,
)

BERLIN = "Europe/Berlin"  # 2026: clocks forward 29 Mar 02:00 -> 03:00, back 25 Oct 03:00 -> 02:00
NEW_YORK = "America/New_York"  # 2026: forward 8 Mar 02:00 -> 03:00, back 1 Nov 02:00 -> 01:00


def z(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def trigger(schedule: dict[str, Any], timezone: str = BERLIN) -> ScheduleTrigger:
    return ScheduleTrigger.model_validate({"kind": "schedule", "timezone": timezone, "schedule": schedule})


def fires(trig: ScheduleTrigger, after: str, count: int) -> list[str]:
    out: list[str] = []
    at: datetime | None = z(after)
    for _ in range(count):
        assert at is not None
        at = next_fire(trig, at)
        if at is None:
            break
        out.append(at.strftime("%m-%dT%H:%M"))
    return out


def test_once_in_the_spring_gap_fires_after_the_gap_and_only_once() -> None:
    once = trigger({"schedule_type": "Once", "at": "2026-03-29T02:30"})
    assert fires(once, "2026-03-01T00:00", 3) == ["03-29T01:30"]  # 03:30 CEST
    assert next_fire(once, z("2026-03-29T01:30")) is None


def test_every_day_keeps_the_wall_time_across_both_changes() -> None:
    daily = trigger({"schedule_type": "Everyday", "schedule_time": "09:00"})
    assert fires(daily, "2026-03-27T12:00", 3) == ["03-28T08:00", "03-29T07:00", "03-30T07:00"]
    assert fires(daily, "2026-10-23T12:00", 3) == ["10-24T07:00", "10-25T08:00", "10-26T08:00"]


def test_every_day_at_a_time_the_clocks_skip_or_repeat() -> None:
    night = trigger({"schedule_type": "Everyday", "schedule_time": "02:30"})
    # 29 March: 02:30 does not exist -> 03:30 CEST (01:30 UTC), the same instant as 02:30 CET the day before.
    assert fires(night, "2026-03-27T12:00", 3) == ["03-28T01:30", "03-29T01:30", "03-30T00:30"]
    # 25 October: 02:30 happens twice -> once, at the first (CEST) occurrence.
    assert fires(night, "2026-10-23T12:00", 3) == ["10-24T00:30", "10-25T00:30", "10-26T01:30"]
    assert local_kind(datetime(2026, 3, 29, 2, 30), night.zone) == "nonexistent"
    assert local_kind(datetime(2026, 10, 25, 2, 30), night.zone) == "ambiguous"
    assert local_kind(datetime(2026, 10, 25, 4, 30), night.zone) == "normal"


def test_days_of_the_week_across_the_new_york_spring_change() -> None:
    weekly = trigger({"schedule_type": "DaysOfTheWeek", "days": ["Wednesday", "Sunday"],
                      "schedule_time": "09:00"}, NEW_YORK)  # fmt: skip
    assert weekly.schedule.days == ["Sunday", "Wednesday"]  # type: ignore[union-attr]
    assert fires(weekly, "2026-03-03T00:00", 4) == ["03-04T14:00", "03-08T13:00", "03-11T13:00", "03-15T13:00"]


def test_days_of_the_week_across_the_new_york_fall_change_at_the_repeated_hour() -> None:
    weekly = trigger({"schedule_type": "DaysOfTheWeek", "days": ["Sunday"], "schedule_time": "01:30"}, NEW_YORK)
    # 1 November 01:30 happens twice (EDT, then EST): the first one, 05:30 UTC.
    assert fires(weekly, "2026-10-20T00:00", 3) == ["10-25T05:30", "11-01T05:30", "11-08T06:30"]


def test_days_of_the_month_skip_months_without_the_date() -> None:
    monthly = trigger({"schedule_type": "DaysOfTheMonth", "dates": [31, 15, 15], "schedule_time": "08:00"}, "UTC")
    assert monthly.schedule.dates == [15, 31]  # type: ignore[union-attr]
    assert fires(monthly, "2026-04-01T00:00", 6) == [
        "04-15T08:00", "05-15T08:00", "05-31T08:00", "06-15T08:00", "07-15T08:00", "07-31T08:00",
    ]  # fmt: skip
    leap = trigger({"schedule_type": "DaysOfTheMonth", "dates": [29], "schedule_time": "00:00"}, "UTC")
    assert next_fire(leap, z("2027-01-30T00:00")) == z("2027-03-29T00:00")  # no 29 February in 2027
    assert next_fire(leap, z("2028-01-30T00:00")) == z("2028-02-29T00:00")


def test_days_of_the_month_across_the_berlin_spring_change() -> None:
    monthly = trigger({"schedule_type": "DaysOfTheMonth", "dates": [29], "schedule_time": "02:15"})
    assert fires(monthly, "2026-02-01T00:00", 3) == ["03-29T01:15", "04-29T00:15", "05-29T00:15"]


def test_regular_minutes_and_hours_are_elapsed_time_across_a_change() -> None:
    hours = trigger({"schedule_type": "AtRegularIntervals", "every": 2, "time_span": "Hours",
                     "start": "2026-10-24T23:00"})  # fmt: skip
    got = [z("2026-10-24T21:00")]
    while len(got) < 5:
        nxt = next_fire(hours, got[-1])
        assert nxt is not None
        got.append(nxt)
    assert all(b - a == timedelta(hours=2) for a, b in itertools.pairwise(got))
    assert next_fire(hours, z("2026-10-01T00:00")) == z("2026-10-24T21:00")  # before the start: the start
    seven = trigger({"schedule_type": "AtRegularIntervals", "every": 7, "time_span": "Minutes",
                     "start": "2026-03-29T01:00"})  # fmt: skip
    assert fires(seven, "2026-03-28T23:59", 3) == ["03-29T00:00", "03-29T00:07", "03-29T00:14"]
    assert next_fire(seven, z("2026-03-29T01:00")) == z("2026-03-29T01:03")  # 60 = 8 * 7 + 4


def test_regular_days_and_weeks_keep_the_wall_time() -> None:
    days = trigger({"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Days",
                    "start": "2026-03-27T09:00"})  # fmt: skip
    assert fires(days, "2026-03-27T00:00", 4) == ["03-27T08:00", "03-28T08:00", "03-29T07:00", "03-30T07:00"]
    three = trigger({"schedule_type": "AtRegularIntervals", "every": 3, "time_span": "Days",
                     "start": "2025-01-01T09:00"})  # fmt: skip
    # 2025-01-01 + 3k days: 2026-03-27 is day 450 (k = 150); then 30 March (after the change), 2 April.
    assert fires(three, "2026-03-25T00:00", 3) == ["03-27T08:00", "03-30T07:00", "04-02T07:00"]
    weeks = trigger({"schedule_type": "AtRegularIntervals", "every": 2, "time_span": "Weeks",
                     "start": "2026-10-18T10:00"})  # fmt: skip
    assert fires(weeks, "2026-10-01T00:00", 3) == ["10-18T08:00", "11-01T09:00", "11-15T09:00"]


def test_due_fire_coalesces_late_ticks_and_skips_what_was_started() -> None:
    seven = trigger({"schedule_type": "AtRegularIntervals", "every": 7, "time_span": "Minutes",
                     "start": "2026-06-01T00:00"}, "UTC")  # fmt: skip
    grace = timedelta(minutes=5)
    assert due_fire(seven, z("2026-06-01T00:07:30"), grace=grace) == z("2026-06-01T00:07")
    assert due_fire(seven, z("2026-06-01T00:10"), grace=grace) == z("2026-06-01T00:07")  # late, within the grace
    started = z("2026-06-01T00:07")
    assert due_fire(seven, z("2026-06-01T00:10"), grace=grace, last_fire=started) is None  # not a fire
    assert due_fire(seven, z("2026-06-01T00:14:00"), grace=timedelta(minutes=20)) == z("2026-06-01T00:14")
    assert due_fire(seven, z("2026-06-01T00:07:30"), grace=grace, last_fire=z("2026-06-01T00:07")) is None
    assert due_fire(seven, z("2026-06-01T00:20"), grace=grace) is None  # 00:14 is older than the grace
    assert is_fire(seven, z("2026-06-01T00:21")) and not is_fire(seven, z("2026-06-01T00:22"))


def test_run_ids_and_outputs_of_fires() -> None:
    daily = trigger({"schedule_type": "Everyday", "schedule_time": "09:00"})
    fire = z("2026-03-29T07:00")
    assert fire_run_id(7, fire) == fire_run_id(7, fire) != fire_run_id(8, fire)
    assert fire_run_id(7, fire) != fire_run_id(7, fire + timedelta(days=1))
    assert trigger_output(daily, fire) == {"scheduled_at": "2026-03-29T07:00:00Z",
                                           "local_time": "2026-03-29T09:00:00+02:00",
                                           "timezone": BERLIN, "schedule_type": "Everyday"}  # fmt: skip


def test_cron_lines_tick_at_every_fire() -> None:
    today = date(2026, 1, 1)
    night = trigger({"schedule_type": "Everyday", "schedule_time": "02:30"})
    assert cron_lines(night, today=today) == [CronLine("30 2,3 * * *", BERLIN, exact=False)]
    weekly = trigger({"schedule_type": "DaysOfTheWeek", "days": ["Monday", "Friday"], "schedule_time": "09:15"})
    assert cron_lines(weekly, today=today) == [CronLine("15 9 * * 1,5", BERLIN, exact=True)]
    monthly = trigger({"schedule_type": "DaysOfTheMonth", "dates": [1, 31], "schedule_time": "18:00"})
    assert cron_lines(monthly, today=today) == [CronLine("0 18 1,31 * *", BERLIN, exact=True)]
    once = trigger({"schedule_type": "Once", "at": "2026-12-24T18:00"})
    assert cron_lines(once, today=today) == [CronLine("0 18 24 12 *", BERLIN, exact=False)]
    seven = trigger({"schedule_type": "AtRegularIntervals", "every": 7, "time_span": "Minutes",
                     "start": "2026-06-01T10:00"})  # fmt: skip
    assert cron_lines(seven, today=today) == [CronLine("* * * * *", "Etc/UTC", exact=False)]
    quarter = trigger({"schedule_type": "AtRegularIntervals", "every": 45, "time_span": "Minutes",
                       "start": "2026-06-01T10:05"})  # fmt: skip
    assert cron_lines(quarter, today=today) == [CronLine("5-59/15 * * * *", "Etc/UTC", exact=False)]
    six_hours = trigger({"schedule_type": "AtRegularIntervals", "every": 6, "time_span": "Hours",
                         "start": "2026-06-01T10:00"})  # fmt: skip
    assert cron_lines(six_hours, today=today) == [CronLine("0 2-23/6 * * *", "Etc/UTC", exact=True)]


@pytest.mark.parametrize(
    "schedule",
    [
        {"schedule_type": "Everyday", "schedule_time": "09:00:30"},
        {"schedule_type": "Everyday", "schedule_time": "25:00"},
        {"schedule_type": "Once", "at": "2026-03-29T02:30+02:00"},
        {"schedule_type": "DaysOfTheWeek", "days": [], "schedule_time": "09:00"},
        {"schedule_type": "DaysOfTheWeek", "days": ["Funday"], "schedule_time": "09:00"},
        {"schedule_type": "DaysOfTheMonth", "dates": [0], "schedule_time": "09:00"},
        {"schedule_type": "DaysOfTheMonth", "dates": [32], "schedule_time": "09:00"},
        {"schedule_type": "AtRegularIntervals", "every": 0, "time_span": "Hours", "start": "2026-01-01T00:00"},
        {"schedule_type": "AtRegularIntervals", "every": 10**20, "time_span": "Hours", "start": "2026-01-01T00:00"},
        {"schedule_type": "AtRegularIntervals", "every": 1, "time_span": "Months", "start": "2026-01-01T00:00"},
        {"schedule_type": "Hourly"},
    ],
)
def test_invalid_schedules_are_refused(schedule: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        trigger(schedule)


def test_a_schedule_runs_in_the_konnect_time_zone_unless_it_has_its_own() -> None:
    base = {"konnect_id": 1, "owner_id": 1, "name": "Daily", "trigger_id": "node-1", "timezone": NEW_YORK,
            "steps": [{"kind": "data_forwarder", "id": "node-2", "name": "Keep", "keys": [{"key": "a"}]}]}  # fmt: skip
    schedule = {"schedule_type": "Everyday", "schedule_time": "09:00"}
    spec = FlowSpec.model_validate({**base, "trigger": {"kind": "schedule", "schedule": schedule}})
    assert isinstance(spec.trigger, ScheduleTrigger) and spec.trigger.timezone == NEW_YORK
    again = FlowSpec.model_validate_json(spec.model_dump_json())
    assert again == spec
    own = FlowSpec.model_validate({**base, "trigger": {"kind": "schedule", "schedule": schedule, "timezone": "UTC"}})
    assert own.trigger.timezone == "UTC"  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="unknown time zone"):
        FlowSpec.model_validate(
            {**base, "trigger": {"kind": "schedule", "schedule": schedule, "timezone": "Mars/Base"}}
        )


NOW_LOCAL = datetime(2026, 3, 27, 14, 37, 12)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"schedule_type": "Once", "schedule_time": "2026-12-24 18:00"}, {"at": datetime(2026, 12, 24, 18, 0)}),
        ({"schedule_type": "Once", "date": "2026-12-24", "time": "6:00 PM"}, {"at": datetime(2026, 12, 24, 18, 0)}),
        ({"schedule_type": "Everyday", "schedule_time": "09:30"}, {"schedule_time": "09:30:00"}),
        ({"schedule_type": "DaysOfTheWeek", "days": ["monday", "Fri"], "schedule_time": "08:00"},
         {"days": ["Monday", "Friday"]}),
        ({"schedule_type": "DaysOfTheMonth", "dates": ["31", 1], "schedule_time": "08:00"}, {"dates": [1, 31]}),
        ({"schedule_type": "AtRegularIntervals", "every": "7", "time_span": "Minutes"},
         {"every": 7, "time_span": "Minutes", "start": datetime(2026, 3, 27, 14, 37)}),
        ({"schedule_type": "AtRegularIntervals", "every": 3, "interval": "days", "schedule_time": "09:00"},
         {"time_span": "Days", "start": datetime(2026, 3, 27, 9, 0)}),
    ],
)  # fmt: skip
def test_editor_values_become_schedules(value: dict[str, Any], expected: dict[str, Any]) -> None:
    got = schedule_from_editor(value, now_local=NOW_LOCAL).model_dump(
        mode="json" if "schedule_time" in expected else "python"
    )
    for key, want in expected.items():
        assert got[key] == want


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"schedule_type": "Hourly"}, "unknown schedule type"),
        ({"schedule_type": "Everyday"}, "the time is missing"),
        ({"schedule_type": "Everyday", "schedule_time": "half past nine"}, "is not a date and time"),
        ({"schedule_type": "Everyday", "schedule_time": "09:00\x00"}, "is not valid"),
        ({"schedule_type": "DaysOfTheWeek", "days": [], "schedule_time": "09:00"}, "choose the days of the week"),
        ({"schedule_type": "DaysOfTheWeek", "days": ["Funday"], "schedule_time": "09:00"}, "day of the week"),
        ({"schedule_type": "DaysOfTheMonth", "dates": ["1.5"], "schedule_time": "09:00"}, "Please Fill Integer Only"),
        ({"schedule_type": "DaysOfTheMonth", "dates": [40], "schedule_time": "09:00"}, "less than or equal to 31"),
        ({"schedule_type": "AtRegularIntervals", "every": "x", "time_span": "Hours"}, "Please Fill Integer Only"),
        ({"schedule_type": "AtRegularIntervals", "every": 2, "time_span": "Months"}, "Minutes, Hours, Days or Weeks"),
        ({"schedule_type": "AtRegularIntervals", "every": 10**30, "time_span": "Hours"}, "less than or equal to 1000"),
    ],
)  # fmt: skip
def test_bad_editor_values_are_explained(value: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        schedule_from_editor(value, now_local=NOW_LOCAL)
