"""The dashboard's numbers, counted in the database."""

from __future__ import annotations

from fastapi import APIRouter

from konnectz_api.crud import konnects as crud
from konnectz_api.deps import CurrentUser, SessionDep
from konnectz_api.schemas import DashboardStats

router = APIRouter(prefix="/api/v1/dashboard", tags=["dashboard"])


@router.get(
    "/stats",
    response_model=DashboardStats,
    summary="Flow counts and task usage of the signed-in user",
    description="total_konnects counts every flow not deleted; active_konnects the Published ones, "
    "inactive_konnects the Draft ones. task_available is task_limit minus task_consumed, never below 0.",
)
def stats(user: CurrentUser, session: SessionDep) -> DashboardStats:
    s = crud.dashboard_stats(session, owner_id=user.id)
    return DashboardStats(
        total_konnects=s.total,
        active_konnects=s.active,
        inactive_konnects=s.inactive,
        task_limit=s.task_limit,
        task_consumed=s.task_consumed,
        task_available=max(s.task_limit - s.task_consumed, 0),
    )
