"""The editor's script-triggers page: the script a custom-script trigger needs, and its status."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from konnectz_api.deps import BusDep, CurrentUser, SessionDep, SettingsDep
from konnectz_api.schemas import Message, ScriptTriggerOut
from konnectz_api.services.script_triggers import script_status

router = APIRouter(prefix="/api/v1/script_triggers", tags=["konnects"])


@router.get(
    "/{script_id}",
    response_model=ScriptTriggerOut,
    responses={404: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
)
async def script_trigger(
    script_id: Annotated[
        int, Path(ge=1, le=2**63 - 1, description="konnect_custom.script_id of the trigger's test (the konnect's id)")
    ],
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    bus: BusDep,
) -> ScriptTriggerOut:
    """The script to install in the app (its platform, the steps, the source with the konnect's
    webhook URL filled in) and its status: WAITING until the script's first request arrived, then
    RECEIVED with that request, which is stored as the trigger's test result. Like Capture Response,
    each call keeps the draft's URL listening for the script (the page polls it). 422 when the
    konnect's trigger does not use a custom script."""
    return await script_status(session, settings, bus, user, script_id)
