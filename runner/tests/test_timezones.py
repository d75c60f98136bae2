"""The owner's time zone as an IANA name or a GMT offset (GMT+05:30), wherever dates use it."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import ValidationError

from konnectz_contracts.errors import StepError
from konnectz_contracts.spec import ScheduleTrigger
from konnectz_contracts.steps.delay import DelayStep
from konnectz_contracts.timezones import cron_zone, gmt_offset_minutes, parse_zone
from konnectz_contracts.triggers.schedule import CronLine, cron_lines, due_fire, next_fire, trigger_output
from konnectz_runner.engine import dates
from konnectz_runner.engine.steps.delay import resume_time


@pytest.mark.parametrize(
    ("value", "minutes"),
    [("GMT+05:30", 330), ("GMT-03:00", -180), ("GMT+14:00", 840), ("GMT-12:00", -720), ("GMT+00:00", 0),
     ("GMT-09:45", -585), ("Europe/Berlin", None)],
)  # fmt: skip
def test_gmt_offsets_parse(value: str, minutes: int | None) -> None:
    assert gmt_offset_minutes(value) == minutes
    zone = parse_zone(value)
    if minutes is not None:
        assert zone.utcoffset(None) == timedelta(minutes=minutes)


@pytest.mark.parametrize(
    ("value", "why"),
    [("GMT+15:00", "00 to 14"), ("GMT-14:15", "at most"), ("GMT+05:20", "00, 15, 30 or 45"),
     ("GMT+5:30", "GMT+HH:MM"), ("GMT+05", "GMT+HH:MM"), ("GMT+\u0660\u0665:\u0663\u0660", "GMT+HH:MM"),
     ("GMT+05:30 ", "GMT+HH:MM"),
     ("Mars/Olympus", "unknown time zone"), ("", "unknown time zone"), ("../../etc/passwd", "unknown time zone")],
)  # fmt: skip
def test_bad_zones_say_why(value: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        parse_zone(value)


def test_cron_zone_names() -> None:
    assert cron_zone("Europe/Berlin") == "Europe/Berlin"
    assert cron_zone("GMT+05:00") == "Etc/GMT-5"  # POSIX signs are inverted
    assert cron_zone("GMT-03:00") == "Etc/GMT+3"
    assert cron_zone("GMT+00:00") == "Etc/UTC"
    assert cron_zone("GMT+05:30") is None
    assert cron_zone("GMT-13:00") is None  # no Etc/GMT+13


def test_a_schedule_in_a_gmt_offset() -> None:
    trigger = ScheduleTrigger.model_validate(
        {"timezone": "GMT+05:30", "schedule": {"schedule_type": "Everyday", "schedule_time": "09:00"}}
    )
    fire = next_fire(trigger, datetime(2026, 11, 26, 12, 0, tzinfo=UTC))
    assert fire == datetime(2026, 11, 27, 3, 30, tzinfo=UTC)
    assert trigger_output(trigger, fire)["local_time"] == "2026-11-27T09:00:00+05:30"
    # No tz database name for +05:30: the CronJob ticks hourly at the UTC minute, tick decides.
    assert cron_lines(trigger, today=date(2026, 11, 26)) == [CronLine("30 * * * *", "Etc/UTC", exact=False)]
    assert due_fire(trigger, datetime(2026, 11, 27, 3, 30, 20, tzinfo=UTC), grace=timedelta(minutes=5)) == fire
    assert due_fire(trigger, datetime(2026, 11, 27, 4, 30, 20, tzinfo=UTC), grace=timedelta(minutes=5)) is None
    whole = ScheduleTrigger.model_validate(
        {"timezone": "GMT-03:00", "schedule": {"schedule_type": "Everyday", "schedule_time": "09:00"}}
    )
    assert cron_lines(whole, today=date(2026, 11, 26)) == [CronLine("0 9 * * *", "Etc/GMT+3", exact=True)]
    with pytest.raises(ValidationError, match="minutes of a GMT offset"):
        ScheduleTrigger.model_validate(
            {"timezone": "GMT+05:10", "schedule": {"schedule_type": "Everyday", "schedule_time": "09:00"}}
        )


def test_dates_and_delays_in_a_gmt_offset() -> None:
    zone = dates.zone("GMT-03:00")
    assert datetime(2026, 1, 1, 12, tzinfo=UTC).astimezone(zone).hour == 9
    with pytest.raises(StepError, match="Unknown time zone"):
        dates.zone("GMT+99:00")
    step = DelayStep(id="n", name="Wait", mode="for", amount=1, unit="days")
    started = datetime(2026, 3, 28, 20, 0, tzinfo=UTC)
    assert resume_time(step, started, parse_zone("GMT+05:30")) == started + timedelta(days=1)
