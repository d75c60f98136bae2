"""Plans and task quotas: every executed action of a run counts one task against the konnect's owner.

Before a run executes, the runner reserves its tasks (:func:`reserve`, served over NATS by
:mod:`konnectz_api.quota_service`): one conditional UPDATE adds them to ``task_consumed`` only if they fit
under ``task_limit``, so concurrent runs can never overdraw a quota. The task-event consumer then
:func:`settle`s the run once (it deduplicates on run_id), in the transaction that stores its task log:
the difference between the actions that really ran and the reservation is debited or credited.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.models import Konnect, QuotaReservation, User


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
    if tasks != 0:
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


@dataclass(frozen=True)
class Reservation:
    allowed: bool
    reason: str | None
    task_limit: int
    task_consumed: int


def reserve(session: Session, *, run_id: str, konnect_id: int, owner_id: int, tasks: int) -> Reservation:
    """Reserve ``tasks`` for one run, atomically, or refuse it with a reason. Idempotent per run_id. Commits."""
    owner = session.scalar(select(Konnect.owner_id).where(Konnect.id == konnect_id))
    if owner is None or owner != owner_id:
        return Reservation(False, f"The run was refused: konnect {konnect_id} does not belong to its owner.", 0, 0)
    if session.get(QuotaReservation, run_id) is not None:  # a redelivered run: reserved before
        limit, consumed = usage(session, owner_id=owner_id)
        return Reservation(True, None, limit, consumed)
    row = session.execute(
        update(User)
        .where(User.id == owner_id, User.task_consumed + tasks <= User.task_limit)
        .values(task_consumed=User.task_consumed + tasks)
        .returning(User.task_limit, User.task_consumed)
    ).one_or_none()
    if row is None:
        session.rollback()
        user = session.get(User, owner_id)
        if user is None:
            return Reservation(False, "The run was refused: its owner no longer exists.", 0, 0)
        available = max(0, user.task_limit - user.task_consumed)
        reason = (
            f"Task quota exceeded: this run needs {tasks} task(s) but only {available} of the "
            f"{user.task_limit} tasks of the {user.current_plan} plan remain ({user.task_consumed} used). "
            "The run was not executed."
        )
        return Reservation(False, reason, user.task_limit, user.task_consumed)
    inserted = session.scalar(
        insert(QuotaReservation)
        .values(run_id=run_id, owner_id=owner_id, tasks=tasks)
        .on_conflict_do_nothing(index_elements=["run_id"])
        .returning(QuotaReservation.run_id)
    )
    if inserted is None:  # the same run reserved concurrently by another delivery: count it once
        session.rollback()
        limit, consumed = usage(session, owner_id=owner_id)
        return Reservation(True, None, limit, consumed)
    session.commit()
    return Reservation(True, None, int(row[0]), int(row[1]))


def settle(session: Session, *, run_id: str, owner_id: int, tasks: int) -> None:
    """Account a finished run's ``tasks`` against what it reserved (none for a run that was never
    reserved). The caller commits, together with the run's task log."""
    reserved = session.scalar(
        delete(QuotaReservation).where(QuotaReservation.run_id == run_id).returning(QuotaReservation.tasks)
    )
    debit(session, owner_id=owner_id, tasks=tasks - int(reserved or 0))


def reserve_many(session: Session, *, requests: list[tuple[str, int, int, int]]) -> list[Reservation]:
    """:func:`reserve` for many (run_id, konnect_id, owner_id, tasks) in one transaction (one commit).

    Each request is decided in order, exactly as :func:`reserve` would, so the conditional UPDATE
    still never lets the runs of one owner overdraw the quota. Commits."""
    konnect_ids = {k for _, k, _, _ in requests}
    owners = dict(session.execute(select(Konnect.id, Konnect.owner_id).where(Konnect.id.in_(konnect_ids))).all())
    run_ids = [r for r, _, _, _ in requests]
    known = set(session.scalars(select(QuotaReservation.run_id).where(QuotaReservation.run_id.in_(run_ids))))
    out: list[Reservation] = []
    for run_id, konnect_id, owner_id, tasks in requests:
        if owners.get(konnect_id) != owner_id:
            out.append(
                Reservation(False, f"The run was refused: konnect {konnect_id} does not belong to its owner.", 0, 0)
            )
            continue
        if run_id in known:  # a redelivered run (or the same run twice in this batch): reserved before
            limit, consumed = usage(session, owner_id=owner_id)
            out.append(Reservation(True, None, limit, consumed))
            continue
        row = session.execute(
            update(User)
            .where(User.id == owner_id, User.task_consumed + tasks <= User.task_limit)
            .values(task_consumed=User.task_consumed + tasks)
            .returning(User.task_limit, User.task_consumed)
        ).one_or_none()
        if row is None:
            user = session.get(User, owner_id)
            if user is None:
                out.append(Reservation(False, "The run was refused: its owner no longer exists.", 0, 0))
                continue
            session.refresh(user)
            available = max(0, user.task_limit - user.task_consumed)
            reason = (
                f"Task quota exceeded: this run needs {tasks} task(s) but only {available} of the "
                f"{user.task_limit} tasks of the {user.current_plan} plan remain ({user.task_consumed} used). "
                "The run was not executed."
            )
            out.append(Reservation(False, reason, user.task_limit, user.task_consumed))
            continue
        inserted = session.scalar(
            insert(QuotaReservation)
            .values(run_id=run_id, owner_id=owner_id, tasks=tasks)
            .on_conflict_do_nothing(index_elements=["run_id"])
            .returning(QuotaReservation.run_id)
        )
        if inserted is None:  # reserved concurrently by another delivery: count it once
            session.execute(update(User).where(User.id == owner_id).values(task_consumed=User.task_consumed - tasks))
            limit, consumed = usage(session, owner_id=owner_id)
            out.append(Reservation(True, None, limit, consumed))
            continue
        known.add(run_id)
        out.append(Reservation(True, None, int(row[0]), int(row[1])))
    session.commit()
    return out
