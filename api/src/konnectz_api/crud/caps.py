"""Plan caps: how many folders, flows and app accounts an account can keep (``quota.PLANS``).

:func:`check` is called before each creation. It locks the owner's row (``SELECT ... FOR NO KEY
UPDATE``) and counts, so concurrent creations (api replicas, double clicks) cannot pass a cap
together. Over the cap: 403, key ``PLAN_LIMIT``, with a message naming the plan and its cap.
Existing items beyond a cap (a plan changed to a smaller one) stay; only new ones are refused.

The lock, and the order of locks: the owner's row is the first row a creating transaction locks,
and it is held only by a short transaction that checks, inserts and commits, never across an app
call or the deployer (``konnectz_api.db.run_db``). ``NO KEY UPDATE`` (not ``UPDATE``) still
serialises the checks of one owner, but does not wait for, nor block, the ``KEY SHARE`` locks that
every insert referencing the owner takes (task logs, activities), so storing runs never waits for
a creation. A check that waits longer than ``lock_timeout`` ends as a 503 with Retry-After.
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.crud.quota import PLANS, Plan
from konnectz_api.errors import Forbidden
from konnectz_api.models import AppAccount, Folder, Konnect, User

__all__ = ["PlanLimit", "check", "plan_of"]

Kind = Literal["folders", "konnects", "app_accounts"]
_NOUN = {"folders": "folders", "konnects": "flows", "app_accounts": "app accounts"}
DELETED = "DELETED"


class PlanLimit(Forbidden):
    """A creation beyond the plan's cap."""


def plan_of(user_plan: str | None) -> Plan:
    return PLANS.get(user_plan or "Free") or PLANS["Free"]


def _count(session: Session, owner_id: int, kind: Kind) -> int:
    if kind == "folders":
        stmt = select(func.count()).select_from(Folder).where(Folder.owner_id == owner_id)
    elif kind == "konnects":
        stmt = select(func.count()).select_from(Konnect).where(Konnect.owner_id == owner_id, Konnect.status != DELETED)
    else:
        stmt = select(func.count()).select_from(AppAccount).where(AppAccount.owner_id == owner_id)
    return int(session.scalar(stmt) or 0)


def check(session: Session, *, owner_id: int, kind: Kind) -> None:
    """Raise :class:`PlanLimit` when the owner may not create one more of ``kind``. Locks the owner's
    row until the caller's transaction ends (the creation commits it)."""
    current = session.scalar(select(User.current_plan).where(User.id == owner_id).with_for_update(key_share=True))
    plan = plan_of(current)
    cap: int = getattr(plan, kind)
    if _count(session, owner_id, kind) >= cap:
        noun = _NOUN[kind]
        raise PlanLimit(
            f"The {plan.name} plan allows {cap} {noun}; delete some or choose a larger plan to add more.",
            key="PLAN_LIMIT",
            status="FAILURE",
        )
