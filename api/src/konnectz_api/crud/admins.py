"""Administrators: named by the installer, never inferred.

An administrator assigns plans and enters OAuth apps in the UI (:mod:`konnectz_api.crud.oauth_clients`).
A user is one when their e-mail is verified and either

- it is on ``KONNECTZ_ADMIN_EMAILS`` (comma-separated, case-insensitive; the Helm value ``adminEmails``), or
- they were granted ``is_admin`` with ``python -m konnectz_api admin grant EMAIL`` (``revoke`` takes it back).

Nothing else makes one: not being the first, the only or the oldest account holder of an install, and
nothing a request carries (sign-up ignores ``is_admin``). An unverified user is never an administrator,
even when named. Without a named administrator, OAuth clients come only from ``KONNECTZ_OAUTH_CLIENTS``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.crud.users import find_user_by_email, is_administrator
from konnectz_api.models import User

__all__ = ["HOW_TO_NAME", "Administrator", "is_administrator", "listed", "set_granted"]

#: How one becomes an administrator: every refusal and the Manage Accounts drawer say it.
HOW_TO_NAME = (
    "The installer names administrators with KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant <email>`."
)


def set_granted(session: Session, email: str, *, granted: bool) -> User | None:
    """Grant (or revoke) ``is_admin`` to the user with ``email``; None when there is none. Commits."""
    user = find_user_by_email(session, email=email)
    if user is None:
        return None
    user.is_admin = granted
    session.commit()
    return user


@dataclass(frozen=True)
class Administrator:
    """A line of ``admin list``: a named or granted e-mail and whether it is an administrator now."""

    email: str
    granted: bool  # is_admin (the CLI)
    named: bool  # on KONNECTZ_ADMIN_EMAILS
    user: bool  # a user with this e-mail exists
    verified: bool

    @property
    def active(self) -> bool:
        return self.user and self.verified and (self.granted or self.named)

    @property
    def why_not(self) -> str:
        if not self.user:
            return "no user with this e-mail yet"
        if not self.verified:
            return "e-mail not verified"
        return ""


def listed(session: Session, settings: Settings) -> list[Administrator]:
    """Every granted user and every named e-mail (signed up or not), by e-mail."""
    names = settings.admin_emails
    named = func.lower(User.email).in_(sorted(names))
    users = list(session.scalars(select(User).where(or_(User.is_admin.is_(True), named))))
    seen = {u.email.lower() for u in users}
    rows = [
        Administrator(
            email=u.email,
            granted=u.is_admin,
            named=u.email.lower() in names,
            user=True,
            verified=u.email_verified_at is not None,
        )
        for u in users
    ]
    rows += [
        Administrator(email=e, granted=False, named=True, user=False, verified=False) for e in names if e not in seen
    ]
    return sorted(rows, key=lambda a: a.email.lower())
