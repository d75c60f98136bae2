"""The dashboard's numbers, counted in the database."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from konnectz_api.crud import reads
from konnectz_api.deps import Reader
from konnectz_api.errors import Unauthorized
from konnectz_api.replies import json_reply
from konnectz_api.schemas import DashboardStats

router = APIRouter(prefix="/api/v1/dashboard", tags=["dashboard"])


@router.get(
    "/stats",
    response_model=DashboardStats,
    summary="Flow counts and task usage of the signed-in user",
    description="total_konnects counts every flow not deleted; active_konnects the Published ones, "
    "inactive_konnects the Draft ones. task_available is task_limit minus task_consumed, never below 0.",
)
async def stats(reader: Reader) -> Response:
    s = await reader.run(reads.dashboard_stats)
    if s is None:  # the account went away since the sign-in check
        raise Unauthorized("Your session has expired. Please sign in again.")
    total, active, inactive, limit, consumed = s
    return json_reply(
        {
            "total_konnects": total,
            "active_konnects": active,
            "inactive_konnects": inactive,
            "task_limit": limit,
            "task_consumed": consumed,
            "task_available": max(limit - consumed, 0),
        }
    )
