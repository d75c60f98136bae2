"""Mail throttling: password-reset and verification mails per e-mail address and per client address in
a fixed window (the sign-in throttle's table, other keys), so nobody can flood an inbox or the SMTP
relay through the api."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.crud import login_throttle
from konnectz_api.errors import TooManyRequests


def check_and_count(session: Session, settings: Settings, *, email: str, address: str | None) -> None:
    """Count one mail request for ``email`` and the client ``address``; raise a 429 with Retry-After when
    either is over its limit in the window (nothing is sent, nothing more is counted). Commits."""
    window = timedelta(seconds=settings.mail_window_seconds)
    email_key = "mail-" + login_throttle.email_key(email)
    address_key = "mail-" + login_throttle.address_key(address or "unknown")
    wait = login_throttle.retry_after(
        session,
        keys_and_limits=[(email_key, settings.mail_max_per_email), (address_key, settings.mail_max_per_address)],
        window=window,
    )
    if wait is not None:
        raise TooManyRequests(
            f"Too many e-mails were requested for this address or from this client. Try again in {wait} seconds.",
            key="TOO_MANY_MAILS",
            headers={"Retry-After": str(wait)},
        )
    login_throttle.record_failure(session, keys=[email_key, address_key], window=window)
