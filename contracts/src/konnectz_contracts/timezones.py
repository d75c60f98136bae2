"""Time zones as users give them: an IANA name (``Europe/Berlin``) or a GMT offset (``GMT+05:30``).

A GMT offset is a fixed offset (no daylight saving time): ``GMT`` then a sign, two-digit hours 00
to 14 and minutes 00, 15, 30 or 45 (``GMT+05:30``, ``GMT-03:00``; ``GMT+14:00`` at most). Anything
else that starts with ``GMT`` and a sign is refused with the reason; other names must be IANA
names. Every place that turns the owner's time zone into a ``tzinfo`` goes through
:func:`parse_zone`, so both forms work for schedules, delays and dates.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["MAX_OFFSET_HOURS", "OFFSET_MINUTES", "cron_zone", "gmt_offset_minutes", "offset_name", "parse_zone"]

MAX_OFFSET_HOURS = 14
OFFSET_MINUTES = (0, 15, 30, 45)
_GMT = re.compile(r"GMT([+-])(.*)")
_HH_MM = re.compile(r"([0-9]{2}):([0-9]{2})")  # ASCII digits only


def gmt_offset_minutes(value: str) -> int | None:
    """The offset in minutes of ``GMT±HH:MM``; None when ``value`` is not a GMT offset at all.

    Raises ValueError (with the reason) for a GMT offset that is not valid.
    """
    m = _GMT.fullmatch(value)
    if m is None:
        return None
    sign, rest = m.groups()
    hm = _HH_MM.fullmatch(rest)
    if hm is None:
        raise ValueError(f"time zone {value[:64]!r}: a GMT offset is written GMT+HH:MM or GMT-HH:MM, e.g. GMT+05:30")
    hours, minutes = int(hm.group(1)), int(hm.group(2))
    if hours > MAX_OFFSET_HOURS:
        raise ValueError(f"time zone {value!r}: the hours of a GMT offset go from 00 to {MAX_OFFSET_HOURS}")
    if minutes not in OFFSET_MINUTES:
        raise ValueError(f"time zone {value!r}: the minutes of a GMT offset are 00, 15, 30 or 45")
    total = hours * 60 + minutes
    if total > MAX_OFFSET_HOURS * 60:
        raise ValueError(f"time zone {value!r}: a GMT offset is at most {MAX_OFFSET_HOURS}:00 hours")
    return total if sign == "+" else -total


def offset_name(minutes: int) -> str:
    """``GMT+05:30`` for 330."""
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return f"GMT{sign}{hours:02d}:{mins:02d}"


def parse_zone(value: str) -> tzinfo:
    """The ``tzinfo`` of an IANA name or a GMT offset; ValueError (saying why) otherwise."""
    offset = gmt_offset_minutes(value)
    if offset is not None:
        return timezone(timedelta(minutes=offset), offset_name(offset))
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {value[:64]!r}: give an IANA name (Europe/Berlin) or GMT+HH:MM") from exc


def cron_zone(value: str) -> str | None:
    """The tz database name a Kubernetes CronJob takes for ``value``.

    IANA names stay; a whole-hour GMT offset is the fixed zone ``Etc/GMT∓H`` (POSIX signs are
    inverted: GMT+05:00 is ``Etc/GMT-5``); None for an offset with minutes (no tz database name
    exists for it: the caller ticks in UTC instead).
    """
    offset = gmt_offset_minutes(value)
    if offset is None:
        return value
    if offset % 60 or not -12 * 60 <= offset <= 14 * 60:  # Etc/GMT+12 (GMT-12:00) .. Etc/GMT-14
        return None
    hours = -offset // 60
    return "Etc/UTC" if hours == 0 else f"Etc/GMT{hours:+d}"
