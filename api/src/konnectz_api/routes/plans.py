"""Plans and the signed-in user's task usage; plan assignment by an administrator."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, EmailStr, Field

from konnectz_api.crud import admins, quota
from konnectz_api.deps import CurrentUser, SessionDep, SettingsDep, SignedInUser
from konnectz_api.errors import Forbidden, NotFound, Unprocessable

router = APIRouter(prefix="/api/v1", tags=["plans"])


class PlanOut(BaseModel):
    name: str
    task_limit: int
    price: str


class UsageOut(BaseModel):
    current_plan: str
    task_limit: int
    task_consumed: int
    task_available: int


class SetPlanIn(BaseModel):
    email: EmailStr
    plan: str = Field(min_length=1, max_length=50)


@router.get("/plans", response_model=list[PlanOut], summary="The plans and their task limits")
def list_plans() -> list[PlanOut]:
    return [PlanOut(name=p.name, task_limit=p.task_limit, price=p.price) for p in quota.PLANS.values()]


@router.get("/users/usage", response_model=UsageOut, summary="The signed-in user's plan and task usage")
def usage(user: CurrentUser, session: SessionDep) -> UsageOut:
    limit, consumed = quota.usage(session, owner_id=user.id)
    return UsageOut(
        current_plan=user.current_plan,
        task_limit=limit,
        task_consumed=consumed,
        task_available=max(limit - consumed, 0),
    )


@router.post(
    "/admin/users/plan",
    response_model=UsageOut,
    summary="Assign a plan (administrators only)",
    description="No payment provider is reachable: plans are assigned by an administrator (named by the installer: "
    "KONNECTZ_ADMIN_EMAILS or `python -m konnectz_api admin grant EMAIL`), "
    "or with `python -m konnectz_api plan set EMAIL PLAN`.",
    responses={403: {"description": "not an administrator"}, 404: {"description": "no such user"}},
)
def set_plan(body: SetPlanIn, user: SignedInUser, session: SessionDep, settings: SettingsDep) -> UsageOut:
    if not admins.is_administrator(user, settings):
        raise Forbidden(f"Only administrators can assign plans. {admins.HOW_TO_NAME}")
    try:
        target = quota.set_plan(session, email=body.email, plan=body.plan)
    except quota.UnknownPlan as exc:
        raise Unprocessable(str(exc)) from exc
    if target is None:
        raise NotFound("User doesn't exist!")
    return UsageOut(
        current_plan=target.current_plan,
        task_limit=target.task_limit,
        task_consumed=target.task_consumed,
        task_available=max(target.task_limit - target.task_consumed, 0),
    )
