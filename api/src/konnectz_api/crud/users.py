"""Users: found by e-mail (the one lookup every module uses), whether one is an administrator, and the
profile changes of the signed-in user (only the editable fields, validated against maintained lists)."""

from __future__ import annotations

import functools
import zoneinfo
from datetime import UTC, datetime

import pycountry
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.crud import sessions
from konnectz_api.models import User
from konnectz_api.schemas import CountryOption, Profile, ProfileOptions, ProfileUpdate, TimezoneOption
from konnectz_contracts.timezones import OFFSET_MINUTES, gmt_offset_minutes, offset_name, parse_zone

EDITABLE_FIELDS = ("first_name", "last_name", "country", "timezone")


def find_user_by_email(session: Session, *, email: str) -> User | None:
    """The user with this e-mail address, or None: surrounding spaces ignored, letters compared case-insensitively.

    Sign-up stores addresses lower-cased; the comparison lower-cases the column too, so a row stored
    otherwise (an older install, a hand-made one) is still found. The one lookup by e-mail: sign-up,
    sign-in, password reset, members, plans, administrators and namespace bindings all use it.
    """
    return session.scalar(select(User).where(func.lower(User.email) == email.strip().lower()))


def is_administrator(user: User, settings: Settings) -> bool:
    """A verified user granted ``is_admin`` or whose e-mail is on ``KONNECTZ_ADMIN_EMAILS``
    (the rules: :mod:`konnectz_api.crud.admins`, which exports this too)."""
    if user.email_verified_at is None:
        return False
    return user.is_admin or user.email.lower() in settings.admin_emails


def profile_of(user: User, settings: Settings) -> Profile:
    """The user's profile; ``is_admin`` says whether they are an administrator now (granted or named on
    KONNECTZ_ADMIN_EMAILS, e-mail verified: :func:`is_administrator`)."""
    return Profile.model_validate(user).model_copy(update={"is_admin": is_administrator(user, settings)})


class InvalidProfile(ValueError):
    """A profile value outside the maintained lists (the message says which)."""


#: How many zone names a GMT offset's label lists as examples.
_EXAMPLES = 3


@functools.lru_cache(maxsize=1)
def profile_options() -> ProfileOptions:
    """Countries from ISO 3166 (pycountry); time zones as the spec shows them, GMT offsets first
    (``GMT+05:30``, each with a few places that use it now), then IANA zones (zoneinfo/tzdata),
    which follow daylight saving time, both sorted by their offset now."""
    countries = sorted(
        (CountryOption(value=c.alpha_2, label=c.name) for c in pycountry.countries), key=lambda c: c.label
    )
    now = datetime.now(UTC)
    zones = []
    places: dict[int, list[str]] = {}
    for name in zoneinfo.available_timezones():
        if "/" not in name or name.startswith(("Etc/", "SystemV/", "US/")) or name == "posixrules":
            continue
        offset = now.astimezone(zoneinfo.ZoneInfo(name)).utcoffset()
        minutes = int(offset.total_seconds() // 60) if offset is not None else 0
        zones.append(TimezoneOption(value=name, label=f"({offset_name(minutes)}) {name}", offset_minutes=minutes))
        places.setdefault(minutes, []).append(name)
    zones.sort(key=lambda z: (z.offset_minutes, z.value))
    offsets = [
        TimezoneOption(
            value=offset_name(minutes),
            label=f"{offset_name(minutes)} ({', '.join(sorted(places[minutes])[:_EXAMPLES])})",
            offset_minutes=minutes,
        )
        for minutes in sorted(places)
        if abs(minutes) % 60 in OFFSET_MINUTES
    ]
    return ProfileOptions(countries=countries, timezones=offsets + zones)


def _valid_country(value: str) -> str:
    found = pycountry.countries.get(alpha_2=value.upper()) if len(value) == 2 else None
    if found is None:
        raise InvalidProfile(f"country: unknown country code {value[:10]!r}")
    return str(found.alpha_2)


def _valid_timezone(value: str) -> str:
    """An IANA zone of the options, or any valid GMT offset (GMT+05:30; hours 00-14, minutes 00/15/30/45)."""
    try:
        if gmt_offset_minutes(value) is not None:
            return value
    except ValueError as exc:
        raise InvalidProfile(f"timezone: {exc}") from exc
    if value not in {z.value for z in profile_options().timezones}:
        raise InvalidProfile(
            f"timezone: unknown time zone {value[:64]!r}; give an IANA name (Europe/Berlin) or a GMT offset (GMT+05:30)"
        )
    return value


def user_timezone(user: User) -> str:
    """The owner's time zone (an IANA name or a GMT offset such as GMT+05:30); UTC when unset or unknown."""
    try:
        parse_zone(user.timezone or "UTC")
    except ValueError:
        return "UTC"
    return user.timezone or "UTC"


def update_profile(session: Session, *, user: User, changes: ProfileUpdate) -> User:
    """Apply the editable fields that were sent; commits. Raises InvalidProfile."""
    data = changes.model_dump(exclude_unset=True, include=set(EDITABLE_FIELDS))
    if data.get("first_name") is not None:
        user.first_name = data["first_name"].strip()
    if "last_name" in data:
        user.last_name = (data["last_name"] or "").strip()
    if "country" in data:
        user.country = _valid_country(data["country"]) if data["country"] else None
    if "timezone" in data:
        user.timezone = _valid_timezone(data["timezone"]) if data["timezone"] else None
    session.commit()
    return user


def set_password(session: Session, *, user: User, password_hash: str) -> int:
    """New password; every token issued before now stops working. Commits; returns the new session version."""
    user.password_hash = password_hash
    session.flush()
    version = sessions.end_all_sessions(session, user_id=user.id)
    session.commit()
    user.session_version = version
    return version
