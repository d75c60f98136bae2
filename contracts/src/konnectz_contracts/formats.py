"""What a step config may name and how it is checked: date units, time zones, locales, currencies,
patterns. The formatting itself is the runner's (:mod:`konnectz_runner.engine.dates`, the formatter step).

Locales and currencies are babel's, patterns the ``regex`` engine's. Both are loaded on the first
check of a config that names one, so a process that only reads contracts (the operator) does not
load them at start.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal

from konnectz_contracts.timezones import parse_zone

__all__ = ["DATE_UNITS", "DateUnit", "check_currency", "check_locale", "check_pattern", "check_zone"]

DateUnit = Literal["minutes", "hours", "days", "weeks", "months", "years"]
DATE_UNITS: tuple[str, ...] = ("minutes", "hours", "days", "weeks", "months", "years")


def _module(name: str) -> Any:
    return importlib.import_module(name)


def check_zone(name: str) -> None:
    """ValueError unless ``name`` is a time zone (IANA, e.g. ``Europe/Berlin``, or ``GMT+05:30``)."""
    try:
        parse_zone(name)
    except ValueError as exc:
        raise ValueError(f"Unknown time zone {name[:64]!r}") from exc


def check_locale(name: str) -> None:
    """ValueError unless babel knows the locale ``name`` (``en_US`` or ``en-US``)."""
    core = _module("babel.core")
    try:
        core.Locale.parse(name.replace("-", "_"))
    except (core.UnknownLocaleError, ValueError, TypeError) as exc:
        raise ValueError(f"Unknown locale {name!r}") from exc


def check_currency(code: str) -> bool:
    """Whether ``code`` is an ISO 4217 currency code babel knows."""
    return bool(_module("babel.numbers").is_currency(code))


def check_pattern(pattern: str) -> None:
    """ValueError unless ``pattern`` compiles on the ``regex`` engine."""
    engine = _module("regex")
    try:
        engine.compile(pattern)
    except engine.error as exc:
        raise ValueError(f"invalid pattern: {exc}") from exc
