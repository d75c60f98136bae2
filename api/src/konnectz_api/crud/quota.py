"""Plans and task quotas: every executed action of a run counts one task against the konnect's owner.

The arithmetic lives here; the task-event consumer debits each run once (it deduplicates on run_id), in
the same transaction that stores the run's task log.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from konnectz_api.models import User


@dataclass(frozen=True)
class Plan:
    name: str
    task_limit: int
    price: str


#: The plans an administrator can assign (no payment provider is reachable: see the README).
PLANS: dict[str, Plan] = {
    "Free": Plan("Free", 1_000, "$0"),
    "Team": Plan("Team", 10_000, "$29/Month"),
    "Agency": Plan("Agency", 50_000, "$99/Month"),
    "Premium": Plan("Premium", 25_000, "$99/Year"),  # the dashboard's 'Upgrade to Premium' offer
}


class UnknownPlan(ValueError):
    pass


def usage(session: Session, *, owner_id: int) -> tuple[int, int]:
    """(task limit, tasks consumed) of one owner; (0, 0) for an unknown owner."""
    row = session.execute(select(User.task_limit, User.task_consumed).where(User.id == owner_id)).one_or_none()
    return (int(row[0]), int(row[1])) if row is not None else (0, 0)


def debit(session: Session, *, owner_id: int, tasks: int) -> None:
    """Add ``tasks`` to the owner's consumption in one UPDATE (atomic against concurrent runs).
    The caller commits, together with the task log that accounts for them."""
    if tasks > 0:
        session.execute(update(User).where(User.id == owner_id).values(task_consumed=User.task_consumed + tasks))


def set_plan(session: Session, *, email: str, plan: str) -> User | None:
    """Assign a plan and its task limit; None when no user has that e-mail. Commits."""
    chosen = PLANS.get(plan) or next((p for p in PLANS.values() if p.name.lower() == plan.lower()), None)
    if chosen is None:
        raise UnknownPlan(f"Unknown plan {plan[:50]!r}; choose one of {', '.join(PLANS)}")
    user = session.scalar(select(User).where(func.lower(User.email) == email.lower()))
    if user is None:
        return None
    user.current_plan = chosen.name
    user.task_limit = chosen.task_limit
    session.commit()
    return user
