"""The editor's webhook capture ("Capture Response")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from konnectz_api.deps import BusDep, CurrentUser, SessionDep, SettingsDep
from konnectz_api.schemas import CaptureOut, Message
from konnectz_api.services.capture import capture_webhook_response

router = APIRouter(prefix="/api/v1/konnect_webhooks", tags=["konnects"])


@router.post(
    "/capture_webhook_response/{webhookId}",
    response_model=CaptureOut,
    responses={404: {"model": Message}, 422: {"model": Message}, 503: {"model": Message}},
)
async def capture(
    webhookId: Annotated[int, Path(ge=1, le=2**63 - 1, description="The konnect id whose webhook is captured")],
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    bus: BusDep,
) -> CaptureOut:
    """Answers WAITING until a request reached the konnect's webhook URL after the first call
    (the editor polls every 7 s); then SUCCESS with that request as the trigger's test output.
    Works for drafts: the runner serves a draft's webhook URL while it is being captured."""
    return await capture_webhook_response(session, settings, bus, user, webhookId)
