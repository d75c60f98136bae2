"""Members: team members (access levels), agency sub-accounts and reseller members; the audit log.

Base path ``/api/v1/members``. Each kind has list, add, update and remove (``remove_*?sub_account_id=``).
Team members need the Team plan, sub-accounts and reseller members the Agency plan; other plans get 403
"This feature is not available for {plan}". Only the account holder manages members (a team member
gets 403 ACCESS_DENIED, see ``konnectz_api.deps.current_user``).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Query

from konnectz_api.core.config import Settings
from konnectz_api.crud import members as crud
from konnectz_api.crud import password_reset
from konnectz_api.db import run_db
from konnectz_api.deps import CurrentUser, DeployerDep, SessionDep, SettingsDep
from konnectz_api.errors import BadRequest, Forbidden, NotFound
from konnectz_api.models import Konnect, User
from konnectz_api.schemas import (
    AgencyList,
    AuditEntryOut,
    AuditLogOut,
    MemberOut,
    MemberReply,
    Message,
    ResellerList,
    SubAccountIn,
    SubAccountUpdate,
    TeamList,
    TeamMemberIn,
    TeamMemberUpdate,
)
from konnectz_api.services import app_webhooks
from konnectz_api.services.deployer import Deployer, DeployError
from konnectz_api.services.mail import send_mail
from konnectz_api.services.publishing import DeployUnavailable

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1/members", tags=["members"])
_PLAN_ERROR: dict[int | str, dict[str, Any]] = {
    403: {"description": "'This feature is not available for {plan}', or a team member (ACCESS_DENIED)"}
}
#: ``update_*`` and ``remove_*`` also answer 404 for a sub_account_id that is not one of the owner's members.
_MEMBER_ERRORS: dict[int | str, dict[str, Any]] = {
    **_PLAN_ERROR,
    404: {"model": Message, "description": "sub_account_id is not one of your members of this kind"},
}
SubAccountId = Annotated[int, Query(ge=1, lt=2**63, description="The member's id")]


def _out(u: User) -> MemberOut:
    name = f"{u.first_name} {u.last_name}".strip()
    if u.member_kind == crud.TEAM:
        return MemberOut(
            id=u.id, name=name, first_name=u.first_name, last_name=u.last_name, email=u.email, access=u.access
        )
    return MemberOut(
        id=u.id,
        name=name,
        first_name=u.first_name,
        last_name=u.last_name,
        email=u.email,
        task=u.task_limit,
        task_consumed=u.task_consumed,
        remaining=max(0, u.task_limit - u.task_consumed),
    )


def _plan(owner: User, kind: crud.Kind) -> None:
    try:
        crud.check_plan(owner, kind)
    except PermissionError as exc:
        raise Forbidden(str(exc), key="FEATURE_NOT_AVAILABLE") from exc


def _invite(settings: Settings, session: SessionDep, owner: User, member: User) -> None:
    token = password_reset.issue_token(session, user=member, lifetime=crud.INVITE_LIFETIME)
    link = f"{settings.public_url.rstrip('/')}/reset-password/{token}"
    inviter = f"{owner.first_name} {owner.last_name}".strip() or owner.email
    text = (
        f"Hi {member.first_name},\n\n{inviter} added you to their Konnectz account. Choose your password "
        f"here, then sign in with {member.email}:\n\n{link}\n\nThe link works once and is valid for 7 days.\n"
    )
    try:
        send_mail(settings, to=member.email, subject="You were added to Konnectz", text=text)
    except OSError as exc:  # the member exists; a password reset sends a new link
        log.error("invitation mail to user %s failed: %s", member.id, exc)


def _member(session: SessionDep, owner: User, kind: crud.Kind, member_id: int) -> User:
    member = crud.get_member(session, owner=owner, kind=kind, member_id=member_id)
    if member is None:
        raise NotFound(f"Member {member_id} not found")
    return member


def _add(
    kind: crud.Kind, body: TeamMemberIn | SubAccountIn, owner: User, session: SessionDep, settings: Settings
) -> MemberReply:
    _plan(owner, kind)
    first, last = body.names()
    if not first:
        raise BadRequest("First name is required")
    try:
        member = crud.add_member(
            session,
            owner=owner,
            kind=kind,
            email=str(body.email),
            first_name=first,
            last_name=last or "",
            access=getattr(body, "access", None),
            task=getattr(body, "task", None),
        )
    except crud.MemberError as exc:
        raise BadRequest(str(exc)) from exc
    _invite(settings, session, owner, member)
    return MemberReply(message="Member added", member=_out(member))


def _update(
    kind: crud.Kind, body: TeamMemberUpdate | SubAccountUpdate, owner: User, session: SessionDep
) -> MemberReply:
    _plan(owner, kind)
    member = _member(session, owner, kind, body.sub_account_id)
    first, last = body.names()
    try:
        crud.update_member(
            session,
            owner=owner,
            member=member,
            first_name=first,
            last_name=last,
            access=getattr(body, "access", None),
            task=getattr(body, "task", None),
        )
    except crud.MemberError as exc:
        raise BadRequest(str(exc)) from exc
    return MemberReply(message="Member updated", member=_out(member))


async def _remove(
    kind: crud.Kind, member_id: int, owner: User, session: SessionDep, deployer: Deployer, settings: Settings
) -> MemberReply:
    _plan(owner, kind)
    member, published = await run_db(session, _member_and_flows, owner, kind, member_id)
    # A sub-account's published flows stop first: its runs must not outlive it.
    for konnect in published:
        try:
            await deployer.unpublish(konnect.id)
        except DeployError as exc:
            raise DeployUnavailable(f"Could not stop the sub-account's flows: {exc}") from exc
        await app_webhooks.unsubscribe(session, settings, konnect)  # at the apps too
    await run_db(session, crud.remove_member, member=member)
    return MemberReply(message="Member removed")


def _member_and_flows(session: SessionDep, owner: User, kind: crud.Kind, member_id: int) -> tuple[User, list[Konnect]]:
    member = _member(session, owner, kind, member_id)
    ids = crud.published_konnects(session, member=member)
    return member, [k for k in (session.get(Konnect, i) for i in ids) if k is not None]


def _member_routes(
    kind: crud.Kind,
    noun: str,
    *,
    add_body: type[TeamMemberIn | SubAccountIn],
    update_body: type[TeamMemberUpdate | SubAccountUpdate],
    add: tuple[str, str | None],
    update: str,
    remove: str,
) -> None:
    """``add_{noun}``, ``update_{noun}`` and ``remove_{noun}`` of one kind of member (summaries and
    an optional description for each); the same endpoint names as hand-written routes would have,
    so the OpenAPI document (operation ids) is the one the web app's types were generated from."""

    def add_member(body: Any, user: CurrentUser, session: SessionDep, settings: SettingsDep) -> MemberReply:
        return _add(kind, body, user, session, settings)

    def update_member(body: Any, user: CurrentUser, session: SessionDep) -> MemberReply:
        return _update(kind, body, user, session)

    async def remove_member(
        sub_account_id: SubAccountId,
        user: CurrentUser,
        session: SessionDep,
        deployer: DeployerDep,
        settings: SettingsDep,
    ) -> MemberReply:
        return await _remove(kind, sub_account_id, user, session, deployer, settings)

    add_member.__annotations__["body"] = add_body  # the request body's model, as FastAPI reads it
    update_member.__annotations__["body"] = update_body
    common: dict[str, Any] = {"response_model": MemberReply, "responses": _PLAN_ERROR}
    summary, description = add
    router.add_api_route(
        f"/add_{noun}",
        add_member,
        methods=["POST"],
        name=f"add_{noun}",
        summary=summary,
        description=description,
        **common,
    )
    by_id: dict[str, Any] = {**common, "responses": _MEMBER_ERRORS}
    router.add_api_route(
        f"/update_{noun}", update_member, methods=["POST"], name=f"update_{noun}", summary=update, **by_id
    )
    router.add_api_route(
        f"/remove_{noun}", remove_member, methods=["GET"], name=f"remove_{noun}", summary=remove, **by_id
    )


# --- team, agency, reseller ---------------------------------------------------------------------------


def list_team_users(user: CurrentUser, session: SessionDep) -> TeamList:
    _plan(user, crud.TEAM)
    rows = [_out(u) for u in crud.list_members(session, owner=user, kind=crud.TEAM)]
    return TeamList(team_users=rows, total=len(rows), allowed_limit=crud.TEAM_MEMBER_LIMIT)


def list_agency_users(user: CurrentUser, session: SessionDep) -> AgencyList:
    _plan(user, crud.AGENCY)
    rows = crud.list_members(session, owner=user, kind=crud.AGENCY)
    total = len(rows) + len(crud.list_members(session, owner=user, kind=crud.RESELLER))
    return AgencyList(
        total_tasks=user.task_limit,
        task_consumed=user.task_consumed,
        total_subaccounts=total,
        allowed_subaccount_limit=crud.SUBACCOUNT_LIMIT,
        sub_accounts=[_out(u) for u in rows],
    )


def list_reseller_users(user: CurrentUser, session: SessionDep) -> ResellerList:
    _plan(user, crud.RESELLER)
    rows = [_out(u) for u in crud.list_members(session, owner=user, kind=crud.RESELLER)]
    return ResellerList(reseller_users=rows, total=len(rows))


_TEAM_ADD = "The member gets a mail with a link to choose a password. access: Create, Create/Delete or FULL."
_AGENCY_ADD = "The sub-accounts' tasks together cannot exceed the agency's task limit."
# Each kind's list route, then its add/update/remove (in this order: the OpenAPI document's).
_KINDS: tuple[tuple[crud.Kind, str, Any, str, type[Any], type[Any], tuple[str, str | None], str, str], ...] = (
    (crud.TEAM, "team_user", list_team_users, "Team members", TeamMemberIn, TeamMemberUpdate,
     ("Add a team member", _TEAM_ADD), "Change a team member", "Remove a team member"),
    (crud.AGENCY, "agency_user", list_agency_users, "Agency sub-accounts", SubAccountIn, SubAccountUpdate,
     ("Add a sub-account with its own task quota", _AGENCY_ADD), "Change a sub-account", "Remove a sub-account"),
    (crud.RESELLER, "reseller_user", list_reseller_users, "Reseller members", SubAccountIn, SubAccountUpdate,
     ("Add a reseller member", None), "Change one", "Remove one"),
)  # fmt: skip


def _register_kinds() -> None:
    for kind, noun, listing, summary, add_body, update_body, add, update, remove in _KINDS:
        router.add_api_route(f"/list_{noun}s", listing, methods=["GET"], responses=_PLAN_ERROR, summary=summary)
        _member_routes(kind, noun, add_body=add_body, update_body=update_body, add=add, update=update, remove=remove)


_register_kinds()


# --- audit log ----------------------------------------------------------------------------------------


@router.get(
    "/audit_log",
    response_model=AuditLogOut,
    summary="Changes made by team members",
    description="Who (e-mail), what (call), when, from where (client address), allowed or denied. Newest first.",
)
def audit_log(
    user: CurrentUser,
    session: SessionDep,
    page_index: Annotated[int, Query(ge=1, le=10**6)] = 1,
    page_size: Annotated[int, Query(ge=1, le=200)] = 50,
) -> AuditLogOut:
    rows, total = crud.audit_log(session, account_id=user.id, limit=page_size, offset=(page_index - 1) * page_size)
    return AuditLogOut(entries=[AuditEntryOut.model_validate(r, from_attributes=True) for r in rows], total=total)
