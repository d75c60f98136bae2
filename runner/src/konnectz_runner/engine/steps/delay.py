"""Runs the ``delay`` step; its config and constants are :mod:`konnectz_contracts.steps.delay`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo

from dateutil import parser as date_parser
from dateutil.relativedelta import relativedelta

from konnectz_contracts.refs import resolve
from konnectz_contracts.steps.delay import (
    MAX_DELAY,
    MIN_SUSPEND,
    DelayStep,
)
from konnectz_contracts.timezones import parse_zone
from konnectz_contracts.triggers.schedule import local_to_utc
from konnectz_runner.engine.context import Outcome, StepContext

__all__ = ["resume_time", "run"]


def resume_time(step: DelayStep, started: datetime, zone: tzinfo, until: str | None = None) -> datetime:
    """When a delay started at ``started`` (aware) ends, in UTC. ``until`` is the resolved until text."""
    if step.mode == "for":
        assert step.amount is not None
        if step.unit in ("minutes", "hours"):
            return started.astimezone(UTC) + timedelta(**{step.unit: step.amount})
        # Calendar steps: the same wall time N days/weeks later in the owner's zone.
        span = relativedelta(days=step.amount) if step.unit == "days" else relativedelta(weeks=step.amount)
        wall = started.astimezone(zone).replace(tzinfo=None) + span
        return local_to_utc(wall, zone)
    text = (until if until is not None else step.until or "").strip()
    try:
        parsed = date_parser.isoparse(text)
    except ValueError:
        try:
            parsed = date_parser.parse(text)
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"Delay Until: {text!r} is not a date and time") from exc
    if parsed.tzinfo is None:
        return local_to_utc(parsed, zone)
    return parsed.astimezone(UTC)


async def run(step: DelayStep, ctx: StepContext) -> Outcome:
    """Compute the resume time; the engine suspends the run when it is in the future."""
    now = ctx.now()
    warnings: list[str] = []
    recorded: dict[str, object] = {"mode": step.mode}
    until_text: str | None = None
    if step.mode == "for":
        recorded.update(amount=step.amount, unit=step.unit)
    else:
        until_text = resolve(step.until or "", ctx.outputs, warnings)
        recorded["until"] = until_text
    if warnings:
        recorded["warnings"] = warnings
    try:
        resume_at = resume_time(step, now, parse_zone(ctx.timezone), until_text)
    except (ValueError, OverflowError) as exc:
        return Outcome.failed(str(exc), input=recorded)
    if resume_at - now > MAX_DELAY:
        return Outcome.failed(f"A delay can last at most {MAX_DELAY.days} days", input=recorded)
    resume_iso = resume_at.isoformat().replace("+00:00", "Z")
    if resume_at - now < MIN_SUSPEND:
        output = {"resume_at": resume_iso, "waited": False, "message": "The time has passed: continued at once"}
        return Outcome(output=output, input=recorded)
    return Outcome(output={"resume_at": resume_iso, "waited": True}, input=recorded, resume_at=resume_at)
