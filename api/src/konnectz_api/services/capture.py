"""Capture Response: the next request to a konnect's webhook URL becomes its trigger's test output.

Each call opens (or renews) the capture window of the konnect's webhook token in NATS
(:mod:`konnectz_runner.bus.capture`); the runner then stores a request arriving at that URL, even for
a draft that was never published. The call answers WAITING until such a request arrived after the
window opened; then it stores the request as the trigger node's konnect activity, closes the
window and answers SUCCESS with the request's data (read exactly as a run would read it).
A custom-script trigger (:mod:`konnectz_api.services.script_triggers`) captures its script's request the same way.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from konnectz_api.bus import Bus
from konnectz_api.compile.compilers import script_of
from konnectz_api.compile.flow import CompileError
from konnectz_api.compile.plan import plan
from konnectz_api.core.config import Settings
from konnectz_api.crud import activities
from konnectz_api.db import run_db
from konnectz_api.errors import ApiError, Unprocessable
from konnectz_api.jsonb import jsonb_safe
from konnectz_api.models import User
from konnectz_api.schemas import CaptureOut
from konnectz_api.services.review import owned_konnect, webhook_url
from konnectz_runner.bus import close_window, last_capture, open_window

__all__ = ["CAPTURED", "NOT_CAUGHT", "WAITING", "CaptureUnavailable", "capture_webhook_response"]

WAITING = "WAITING"
CAPTURED = "Webhook response captured"
# The editor's message when a capture fails (canvas spec §8).
NOT_CAUGHT = "Sorry, we couldn't catch the webhook! Could you please try again?"


class CaptureUnavailable(ApiError):
    status_code = 503


async def capture_webhook_response(
    session: Session, settings: Settings, bus: Bus, user: User, konnect_id: int
) -> CaptureOut:
    konnect = await run_db(session, owned_konnect, user, konnect_id)
    try:
        trigger = plan(konnect.canvas_json, require_linked=False).trigger
    except CompileError as exc:
        raise Unprocessable(str(exc)) from exc
    if trigger.provider != "webhook" and script_of(trigger) is None:
        raise Unprocessable(f"{trigger.label}: only a Webhook trigger can capture a request")
    url = webhook_url(settings, konnect)
    try:
        js = bus.js
        window = await open_window(js, konnect.webhook_token, konnect.id)
        captured = await last_capture(js, konnect.id, window.since)
        if captured is not None:
            await close_window(js, konnect.webhook_token)
    except Exception as exc:
        raise CaptureUnavailable(NOT_CAUGHT, detail=str(exc) or type(exc).__name__) from exc
    if captured is None:
        return CaptureOut(
            message=WAITING,
            test_status=WAITING,
            display_message=f"Waiting for a request to {url}",
            raw_response=None,
            konnect_id=konnect.id,
            konnect_activity_id=None,
            webhook_url=url,
        )
    output = jsonb_safe(captured.trigger_output)
    activity_id = await run_db(
        session,
        activities.save_activity,
        konnect_id=konnect.id,
        owner_id=user.id,
        node_id=trigger.id,
        kind=trigger.provider,
        app_name=trigger.detail.name,
        status=activities.SUCCESS,
        display_message=CAPTURED,
        input={"received_at": captured.received_at.isoformat()},
        output=output,
    )
    return CaptureOut(
        message="SUCCESS",
        test_status="Success",
        display_message=CAPTURED,
        raw_response=output,
        konnect_id=konnect.id,
        konnect_activity_id=activity_id,
        webhook_url=url,
    )
