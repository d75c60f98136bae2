"""Members: team members who work in an account, agency sub-accounts and reseller members.

- A **team member** (Team plan) signs in with their own credentials and works in the account that added
  them. Their access level decides what they may do there, checked on every call in
  :func:`konnectz_api.deps.current_user`:

  ========== ==================================================================
  Create       read everything; create, edit, publish and unpublish flows, folders and app accounts
  Create/Delete  the same, and delete them (a DELETE call, a route ``.../remove`` or ``.../delete``,
               a flow's status set to DELETED, an app account's update_status (REMOVE))
  FULL         the same, and read the account's audit log
  ========== ==================================================================

  Managing members and plans stays with the account holder. Every change a member makes (and every
  refused attempt) is written to the audit log: who, what, when, from where.
- An **agency sub-account** (Agency plan) is an account of its own, with its own flows and its own task
  quota (``task``); the sub-accounts' quotas together cannot exceed the agency's task limit, and their
  number is capped by :data:`SUBACCOUNT_LIMIT`. **Reseller members** are sub-accounts of the same kind
  that the agency resells; they share the same cap.

A new member gets a mail with a link to choose their password (the password-reset link).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from konnectz_api.core.security import hash_password, new_token
from konnectz_api.crud.users import find_user_by_email
from konnectz_api.models import AuditEntry, Konnect, User, utcnow

TEAM: Literal["team"] = "team"
AGENCY: Literal["agency"] = "agency"
RESELLER: Literal["reseller"] = "reseller"
Kind = Literal["team", "agency", "reseller"]
ACCESS_LEVELS = ("Create", "Create/Delete", "FULL")
READ, CREATE, DELETE, FULL, OWNER = "read", "create", "delete", "full", "owner"
_GRANTS = {
    "Create": {READ, CREATE},
    "Create/Delete": {READ, CREATE, DELETE},
    "FULL": {READ, CREATE, DELETE, FULL},
}
#: Which plan may manage which kind of member.
PLAN_OF_KIND = {TEAM: "Team", AGENCY: "Agency", RESELLER: "Agency"}
TEAM_MEMBER_LIMIT = 25
SUBACCOUNT_LIMIT = 10
SUBACCOUNT_PLAN = "Sub-account"
_DELETE_SEGMENTS = {"remove", "delete", "destroy"}
_DELETE_STATUSES = {"DELETED", "REMOVE", "REMOVED"}


class MemberError(ValueError):
    """A member change that is refused, with the message for the user."""


def required_level(method: str, route_path: str) -> str:
    """The access level a call needs by the route's meaning (see the module's table): its method and
    its path *template* (``/api/v1/folders/{folder_id}/remove``), never the raw URL or a header.

    A route whose level depends on what its body asks (a flow's status change) decides it from the
    parsed, validated body instead (:func:`status_level`, :class:`konnectz_api.deps.AccountAt`).
    """
    if route_path.startswith("/api/v1/members/audit_log"):
        return FULL
    if route_path.startswith(("/api/v1/members/", "/api/v1/admin/")):
        return OWNER
    last = route_path.rstrip("/").rsplit("/", 1)[-1]
    if method in ("GET", "HEAD", "OPTIONS"):
        return DELETE if last in _DELETE_SEGMENTS else READ
    if method == "DELETE" or last in _DELETE_SEGMENTS:
        return DELETE
    return CREATE


def status_level(status: str) -> str:
    """The level of a status change read from a validated body: deleting needs Create/Delete."""
    return DELETE if status.upper() in _DELETE_STATUSES else CREATE


def allows(access: str | None, level: str) -> bool:
    return level in _GRANTS.get(access or "", set())


def denied_message(access: str | None, level: str) -> str:
    what = {
        DELETE: "delete anything",
        FULL: "see this",
        OWNER: "manage members or plans",
        CREATE: "make changes",
    }.get(level, "do this")
    return f"Your access level ({access}) does not allow you to {what} in this account."


def audit(session: Session, *, account_id: int, actor: User, action: str, outcome: str, address: str | None) -> None:
    """Record one change (or refused attempt) by a member. Commits."""
    session.add(
        AuditEntry(
            account_id=account_id,
            actor_id=actor.id,
            actor_email=actor.email,
            action=action[:400],
            outcome=outcome,
            address=(address or "")[:64] or None,
        )
    )
    session.commit()


def audit_log(session: Session, *, account_id: int, limit: int, offset: int) -> tuple[list[AuditEntry], int]:
    stmt = select(AuditEntry).where(AuditEntry.account_id == account_id)
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = session.scalars(stmt.order_by(AuditEntry.id.desc()).limit(limit).offset(offset))
    return list(rows), int(total)


def check_plan(owner: User, kind: Kind) -> None:
    if owner.parent_id is not None or owner.current_plan != PLAN_OF_KIND[kind]:
        raise PermissionError(f"This feature is not available for {owner.current_plan}")


def list_members(session: Session, *, owner: User, kind: Kind) -> list[User]:
    stmt = select(User).where(User.parent_id == owner.id, User.member_kind == kind).order_by(User.id)
    return list(session.scalars(stmt))


def get_member(session: Session, *, owner: User, kind: Kind, member_id: int) -> User | None:
    if not 0 < member_id < 2**63:
        return None
    member = session.get(User, member_id)
    if member is None or member.parent_id != owner.id or member.member_kind != kind:
        return None
    return member


def _subaccounts(session: Session, *, owner: User) -> list[User]:
    stmt = select(User).where(User.parent_id == owner.id, User.member_kind.in_((AGENCY, RESELLER)))
    return list(session.scalars(stmt))


def _check_task(session: Session, *, owner: User, task: int, replacing: User | None) -> None:
    allotted = sum(u.task_limit for u in _subaccounts(session, owner=owner) if u is not replacing)
    if allotted + task > owner.task_limit:
        left = max(0, owner.task_limit - allotted)
        raise MemberError(f"Only {left} of your {owner.task_limit} tasks are left to give to sub-accounts.")


def add_member(
    session: Session,
    *,
    owner: User,
    kind: Kind,
    email: str,
    first_name: str,
    last_name: str,
    access: str | None,
    task: int | None,
) -> User:
    """Create the member's user (no usable password until they follow the mailed link). Commits."""
    if find_user_by_email(session, email=email) is not None:
        raise MemberError(f"A user with the e-mail {email} already exists.")
    if kind == TEAM:
        if len(list_members(session, owner=owner, kind=TEAM)) >= TEAM_MEMBER_LIMIT:
            raise MemberError(f"A team has at most {TEAM_MEMBER_LIMIT} members.")
    else:
        if len(_subaccounts(session, owner=owner)) >= SUBACCOUNT_LIMIT:
            raise MemberError(f"You have reached your limit of {SUBACCOUNT_LIMIT} sub-accounts.")
        _check_task(session, owner=owner, task=task or 0, replacing=None)
    member = User(
        email=email,
        password_hash=hash_password(new_token()),  # unusable until the member sets their own
        first_name=first_name,
        last_name=last_name,
        email_verified_at=utcnow(),
        parent_id=owner.id,
        member_kind=kind,
        access=access if kind == TEAM else None,
        task_limit=task or 0 if kind != TEAM else 0,
        current_plan=SUBACCOUNT_PLAN if kind != TEAM else owner.current_plan,
        timezone=owner.timezone,
        country=owner.country,
    )
    session.add(member)
    session.commit()
    return member


def update_member(
    session: Session,
    *,
    owner: User,
    member: User,
    first_name: str | None,
    last_name: str | None,
    access: str | None,
    task: int | None,
) -> User:
    if first_name is not None:
        member.first_name = first_name
    if last_name is not None:
        member.last_name = last_name
    if member.member_kind == TEAM and access is not None:
        member.access = access
    if member.member_kind != TEAM and task is not None:
        if task < member.task_consumed:
            raise MemberError(f"This sub-account has already used {member.task_consumed} tasks.")
        _check_task(session, owner=owner, task=task, replacing=member)
        member.task_limit = task
    session.commit()
    return member


def published_konnects(session: Session, *, member: User) -> list[int]:
    """The published flows of a sub-account (to stop before it is removed)."""
    stmt = select(Konnect.id).where(Konnect.owner_id == member.id, Konnect.status == "Published")
    return list(session.scalars(stmt))


def remove_member(session: Session, *, member: User) -> None:
    """Delete the member's user: their sessions end (the token's user is gone). Commits."""
    session.delete(member)
    session.commit()


INVITE_LIFETIME = timedelta(days=7)
