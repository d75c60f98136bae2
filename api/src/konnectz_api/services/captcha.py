"""Self-hosted proof-of-work captcha (ALTCHA PoW v2), verified here, no third party involved."""

from __future__ import annotations

import multiprocessing
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import altcha
from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.core.config import Settings
from konnectz_api.models import CaptchaUse

ALGORITHM = "PBKDF2/SHA-256"


def _keys(settings: Settings) -> tuple[str, str]:
    return settings.secret_key + ":altcha", settings.secret_key + ":altcha-key"


def new_challenge(settings: Settings) -> dict[str, Any]:
    hmac_secret, hmac_key_secret = _keys(settings)
    challenge = altcha.create_challenge(
        ALGORITHM,
        settings.captcha_cost,
        counter=secrets.randbelow(settings.captcha_max_number),
        expires_at=datetime.now(UTC) + timedelta(seconds=settings.captcha_ttl_seconds),
        hmac_secret=hmac_secret,
        hmac_key_secret=hmac_key_secret,
    )
    return challenge.to_dict()


def verify(settings: Settings, session: Session, payload: str | None) -> bool:
    """True once per solved challenge: a valid, unexpired solution that was not used before."""
    if not payload:
        return False
    hmac_secret, hmac_key_secret = _keys(settings)
    try:
        parsed = altcha.Payload.from_base64(payload)
        result = altcha.verify_solution(parsed, hmac_secret, hmac_key_secret=hmac_key_secret)
    except Exception:  # malformed payloads are simply not verified
        return False
    if not result.verified or not parsed.challenge.signature:
        return False
    now = datetime.now(UTC)
    session.execute(delete(CaptchaUse).where(CaptchaUse.expires_at < now))
    inserted = session.scalar(
        insert(CaptchaUse)
        .values(
            signature=parsed.challenge.signature[:128],
            expires_at=now + timedelta(seconds=settings.captcha_ttl_seconds),
        )
        .on_conflict_do_nothing()
        .returning(CaptchaUse.signature)
    )
    session.commit()
    return inserted is not None


def _solve_part(args: tuple[dict[str, Any], int, int]) -> int | None:
    challenge, start, step = args
    solution = altcha.solve_challenge(
        altcha.Challenge.from_dict(challenge), counter_start=start, counter_step=step, timeout=120
    )
    return None if solution is None else solution.counter


def solve(challenge: dict[str, Any], *, workers: int = 1) -> str:
    """Solve a challenge like the browser widget does (for the CLI and tests).

    With ``workers`` > 1 (the CLI passes one per core) the counters are split over forked processes,
    as the widget splits them over web workers; the first process to find the counter wins.
    """
    parsed = altcha.Challenge.from_dict(challenge)
    n = max(1, workers)
    if n == 1:
        solution = altcha.solve_challenge(parsed, timeout=120)
        if solution is None:
            raise TimeoutError("captcha not solved in time")
        return altcha.Payload(parsed, solution).to_base64()
    with multiprocessing.get_context("fork").Pool(n) as pool:
        for counter in pool.imap_unordered(_solve_part, [(challenge, i, n) for i in range(n)]):
            if counter is not None:
                pool.terminate()
                # Re-derive the key for the found counter (one derivation) to build the payload.
                solution = altcha.solve_challenge(parsed, counter_start=counter, timeout=10)
                if solution is None or solution.counter != counter:  # pragma: no cover (cannot differ)
                    break
                return altcha.Payload(parsed, solution).to_base64()
    raise TimeoutError("captcha not solved in time")
