"""Dates for the add-ons (formatter, generator, coupon): parse, format, shift, convert.

Built on dateutil (parsing, calendar arithmetic), zoneinfo with the ``tzdata`` package (time
zones and their DST rules) and babel (locale-aware LDML patterns such as ``yyyy-MM-dd HH:mm``).

Rules, the same everywhere a date is handled:

- A value without an offset is wall-clock time in the given zone (the flow owner's zone unless
  the step names one). A wall-clock time that does not exist in that zone (skipped by a DST
  change, e.g. 02:30 on the spring-forward night) moves forward by the gap (03:30); one that
  exists twice (the fall-back hour) is the first of the two (still summer time).
- Minutes and hours are elapsed time: adding 1 hour across a DST change moves the clock by 1
  real hour. Days, weeks, months and years are calendar time: adding 1 day keeps the wall-clock
  time (a day may then last 23 or 25 hours); adding 1 month to 31 January gives the last day of
  February.
- Numbers are Unix timestamps: seconds, or milliseconds when they have 12 or more digits.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from babel.core import Locale, UnknownLocaleError
from babel.dates import format_datetime
from dateutil import parser as date_parser
from dateutil.relativedelta import relativedelta

from konnectz_contracts.errors import StepError
from konnectz_contracts.timezones import parse_zone

__all__ = [
    "format_date",
    "parse_date",
    "parse_locale",
    "shift",
    "zone",
]

# Named output formats; anything else is an LDML pattern (babel), e.g. "dd.MM.yyyy HH:mm".
NAMED_FORMATS = ("iso", "date", "time", "unix", "unix_ms")
_MS_DIGITS = 12
_MAX_TEXT = 200
_TIMESTAMP = re.compile(r"-?\d+(\.\d+)?")


def zone(name: str) -> tzinfo:
    """The time zone ``name`` (IANA, e.g. ``Europe/Berlin``, or a GMT offset, ``GMT+05:30``), or a StepError."""
    try:
        return parse_zone(name)
    except ValueError as exc:
        raise StepError(f"Unknown time zone {name[:64]!r}") from exc


def parse_locale(name: str) -> Locale:
    try:
        return Locale.parse(name.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError) as exc:
        raise StepError(f"Unknown locale {name!r}") from exc


def _normalize(local: datetime, tz: tzinfo) -> datetime:
    """``local`` (wall clock in ``tz``) as a real instant in ``tz``: skipped times move forward by the gap."""
    aware = local.replace(tzinfo=tz, fold=0)
    return aware.astimezone(UTC).astimezone(tz)


def _from_timestamp(number: Decimal, unit: str) -> datetime:
    if unit == "unix_ms" or (unit == "auto" and len(str(abs(int(number)))) >= _MS_DIGITS):
        number = number / 1000
    try:
        return datetime.fromtimestamp(float(number), UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise StepError(f"{number} is not a valid timestamp") from exc


def parse_date(
    value: Any,
    tz: tzinfo,
    *,
    from_format: Literal["auto", "unix", "unix_ms"] = "auto",
    day_first: bool = False,
) -> datetime:
    """An aware datetime from text (almost any common way of writing a date) or a Unix timestamp."""
    if isinstance(value, datetime):
        return value if value.tzinfo else _normalize(value, tz)
    if isinstance(value, bool) or value is None:
        raise StepError(f"{value!r} is not a date")
    text = str(value).strip()
    if not text:
        raise StepError("The date is empty")
    if len(text) > _MAX_TEXT:
        raise StepError(f"The date is longer than {_MAX_TEXT} characters")
    numeric: Decimal | None = None
    try:
        numeric = Decimal(text)
    except InvalidOperation:
        numeric = None
    if numeric is not None and numeric.is_finite() and (from_format != "auto" or _TIMESTAMP.fullmatch(text)):
        return _from_timestamp(numeric, from_format)
    if from_format != "auto":
        raise StepError(f"{text!r} is not a Unix timestamp")
    try:
        parsed = date_parser.parse(text, dayfirst=day_first)
    except (ValueError, OverflowError) as exc:
        raise StepError(f"{text!r} is not a date") from exc
    if parsed.tzinfo is None:
        return _normalize(parsed, tz)
    return parsed


def format_date(moment: datetime, fmt: str, tz: tzinfo, locale: str = "en_US") -> str | int:
    """``moment`` in ``tz`` as ``iso``, ``date``, ``time``, ``unix``, ``unix_ms`` or an LDML pattern."""
    local = moment.astimezone(tz)
    name = fmt.strip() or "iso"
    if name == "iso":
        return local.isoformat()
    if name == "date":
        return local.date().isoformat()
    if name == "time":
        return local.strftime("%H:%M:%S")
    if name == "unix":
        return int(moment.timestamp())
    if name == "unix_ms":
        return int(moment.timestamp() * 1000)
    try:
        return format_datetime(local, name, tzinfo=tz, locale=parse_locale(locale))
    except (ValueError, KeyError, AttributeError) as exc:
        raise StepError(f"Invalid date format {fmt!r}: {exc}") from exc


def shift(moment: datetime, amount: int, unit: str, tz: tzinfo) -> datetime:
    """``moment`` moved by ``amount`` ``unit`` (negative goes back); see the module rules for DST."""
    try:
        if unit in ("minutes", "hours"):
            delta = timedelta(minutes=amount) if unit == "minutes" else timedelta(hours=amount)
            return (moment.astimezone(UTC) + delta).astimezone(tz)
        if unit not in ("days", "weeks", "months", "years"):
            raise StepError(f"Unknown date unit {unit!r}")
        local = moment.astimezone(tz).replace(tzinfo=None)
        moved = local + relativedelta(
            days=amount if unit == "days" else 0,
            weeks=amount if unit == "weeks" else 0,
            months=amount if unit == "months" else 0,
            years=amount if unit == "years" else 0,
        )
        return _normalize(moved, tz)
    except (OverflowError, ValueError) as exc:
        raise StepError(f"Cannot move the date by {amount} {unit}: out of range") from exc
