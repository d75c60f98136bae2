"""Plans and task quotas: every executed action of a run counts one task against the konnect's owner.

Before a run executes, the runner reserves its tasks (:func:`reserve`, served over NATS by
:mod:`konnectz_api.services.quotas`): one conditional UPDATE adds them to ``task_consumed`` only if they fit
under ``task_limit``, so concurrent runs can never overdraw a quota. The task-event consumer then
:func:`settle`s the run once (it deduplicates on run_id), in the transaction that stores its task log:
the difference between the actions that really ran and the reservation is debited or credited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, delete, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from konnectz_api.crud.users import find_user_by_email
from konnectz_api.models import Konnect, QuotaReservation, User


@dataclass(frozen=True)
class Plan:
    name: str
    task_limit: int
    price: str
    #: What an account of the plan can keep at once (konnectz_api.crud.caps): folders, flows (not
    #: deleted) and app accounts. Team members work in the owner's account and share its caps.
    folders: int
    konnects: int
    app_accounts: int


#: The plans an administrator can assign (no payment provider is reachable: see the README), and
#: their caps; docs/account.md shows this table.
PLANS: dict[str, Plan] = {
    "Free": Plan("Free", 1_000, "$0", folders=50, konnects=200, app_accounts=50),
    "Team": Plan("Team", 10_000, "$29/Month", folders=500, konnects=2_000, app_accounts=500),
    "Agency": Plan("Agency", 50_000, "$99/Month", folders=1_000, konnects=5_000, app_accounts=1_000),
    # the dashboard's 'Upgrade to Premium' offer
    "Premium": Plan("Premium", 25_000, "$99/Year", folders=500, konnects=2_000, app_accounts=500),
}
#: The most of anything a plan allows: list calls that are not paged answer at most this many items.
MAX_LISTED = max(max(p.folders, p.app_accounts) for p in PLANS.values())


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
    user = find_user_by_email(session, email=email)
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
    return reserve_many(session, requests=[(run_id, konnect_id, owner_id, tasks)])[0]


def settle(session: Session, *, run_id: str, owner_id: int, tasks: int) -> None:
    """Account a finished run's ``tasks`` against what it reserved (none for a run that was never
    reserved). The caller commits, together with the run's task log."""
    reserved = session.scalar(
        delete(QuotaReservation).where(QuotaReservation.run_id == run_id).returning(QuotaReservation.tasks)
    )
    debit(session, owner_id=owner_id, tasks=tasks - int(reserved or 0))


@dataclass
class _Usage:
    limit: int
    consumed: int
    plan: str


def _exceeded(tasks: int, limit: int, consumed: int, plan: str) -> str:
    available = max(0, limit - consumed)
    return (
        f"Task quota exceeded: this run needs {tasks} task(s) but only {available} of the "
        f"{limit} tasks of the {plan} plan remain ({consumed} used). The run was not executed."
    )


def reserve_many(session: Session, *, requests: list[tuple[str, int, int, int]]) -> list[Reservation]:
    """Reserve the tasks of many runs, (run_id, konnect_id, owner_id, tasks) each, in one transaction.

    Set-based, whatever the batch size, in three statements: the owners' rows are locked with their
    konnects (``SELECT … FOR UPDATE OF users``, in id order), one multi-row INSERT … ON CONFLICT DO
    NOTHING stores the reservations (a run it does not return was reserved before: a redelivery, or
    another delivery meanwhile, and is allowed without counting again), then each new request is
    decided in order against its owner's remaining tasks exactly as one conditional UPDATE per run
    would decide it (so the runs of one owner never overdraw the quota, also across api replicas,
    which wait on the lock), and one UPDATE per owner adds their tasks. The reservations of refused
    runs are deleted again (one more statement, only then). Commits."""
    konnect_ids = {k for _, k, _, _ in requests}
    owners: dict[int, int] = {}
    users: dict[int, _Usage] = {}
    for row in session.execute(
        select(Konnect.id, Konnect.owner_id, User.task_limit, User.task_consumed, User.current_plan)
        .join(User, User.id == Konnect.owner_id)
        .where(Konnect.id.in_(konnect_ids))
        .order_by(User.id)
        .with_for_update(of=User)
    ):
        owners[int(row.id)] = int(row.owner_id)
        users[int(row.owner_id)] = _Usage(int(row.task_limit), int(row.task_consumed), str(row.current_plan))
    wanted: dict[str, tuple[int, int]] = {}  # run_id -> (owner_id, tasks), the first request of each run
    for run_id, konnect_id, owner_id, tasks in requests:
        if owners.get(konnect_id) == owner_id and run_id not in wanted:
            wanted[run_id] = (owner_id, tasks)
    table = cast(Table, QuotaReservation.__table__)
    inserted: set[str] = set()
    if wanted:
        inserted = set(
            session.scalars(
                insert(table).on_conflict_do_nothing(index_elements=["run_id"]).returning(table.c.run_id),
                [{"run_id": r, "owner_id": o, "tasks": t} for r, (o, t) in wanted.items()],
            )
        )
    out: list[Reservation] = []
    decided: set[str] = set()
    refused: list[str] = []
    added: dict[int, int] = {}
    for run_id, konnect_id, owner_id, tasks in requests:
        if owners.get(konnect_id) != owner_id:
            out.append(
                Reservation(False, f"The run was refused: konnect {konnect_id} does not belong to its owner.", 0, 0)
            )
            continue
        user = users[owner_id]
        limit, consumed, plan = user.limit, user.consumed, user.plan
        if run_id not in inserted or run_id in decided:  # reserved before: not counted twice
            out.append(Reservation(True, None, limit, consumed))
            continue
        decided.add(run_id)
        tasks = wanted[run_id][1]
        if consumed + tasks > limit:
            refused.append(run_id)
            out.append(Reservation(False, _exceeded(tasks, limit, consumed, plan), limit, consumed))
            continue
        user.consumed = consumed + tasks
        added[owner_id] = added.get(owner_id, 0) + tasks
        out.append(Reservation(True, None, limit, consumed + tasks))
    if refused:
        session.execute(delete(QuotaReservation).where(QuotaReservation.run_id.in_(refused)))
    for owner_id, tasks in sorted(added.items()):
        if tasks:
            session.execute(update(User).where(User.id == owner_id).values(task_consumed=User.task_consumed + tasks))
    session.commit()
    return out
