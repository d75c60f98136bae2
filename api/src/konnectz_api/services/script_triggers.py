"""Custom-script triggers (canvas spec §4 Trigger handling: "a trigger with a custom script, for
example a form or sheet response, opens a script-triggers page in a popup").

Some app events cannot be watched through the app's API or webhooks: the user installs a small
script inside the app (Google Apps Script bound to a form, for example) that posts each new item to
the konnect's webhook URL. Such an event's manifest declares ``trigger: {type: script, platform,
install, source}`` (:class:`konnectz_contracts.manifest.ScriptTrigger`).

- Test & Review of such a trigger answers ``konnect_custom: {script_id}``; the editor opens the
  script-triggers page (``/script-triggers/{script_id}``) in a popup. One konnect has one trigger,
  so the script's id is the konnect's id.
- ``GET /api/v1/script_triggers/{script_id}`` shows the script with the konnect's URL filled in
  and its status: WAITING until the script's first request arrived, then RECEIVED with it. Each
  call opens (or renews) the capture window of the konnect's URL, exactly as Capture Response does
  for a Webhook trigger, so a draft receives the script's request; the request is stored as the
  trigger's test result and becomes the data later nodes map.
- Published, the trigger is a webhook trigger on the same URL
  (:func:`konnectz_api.compile.compilers.compile_script_trigger`).
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
from konnectz_api.errors import Unprocessable
from konnectz_api.models import User
from konnectz_api.schemas import ScriptTriggerOut
from konnectz_api.services.capture import capture_webhook_response
from konnectz_api.services.review import owned_konnect, webhook_url

__all__ = ["NOT_A_SCRIPT", "RECEIVED", "WAITING", "script_status"]

WAITING = "WAITING"
RECEIVED = "RECEIVED"
NOT_A_SCRIPT = "This flow's trigger does not use a custom script"


async def script_status(session: Session, settings: Settings, bus: Bus, user: User, script_id: int) -> ScriptTriggerOut:
    """The script of a konnect's trigger with its URL, and whether its first request arrived."""
    konnect = await run_db(session, owned_konnect, user, script_id)
    try:
        trigger = plan(konnect.canvas_json, require_linked=False).trigger
    except CompileError as exc:
        raise Unprocessable(str(exc)) from exc
    found = script_of(trigger)
    if found is None:
        raise Unprocessable(NOT_A_SCRIPT)
    app, event, script = found
    url = webhook_url(settings, konnect)
    earlier = await run_db(
        session, activities.get_activity, owner_id=user.id, konnect_id=konnect.id, node_id=trigger.id
    )
    received = earlier.output if earlier is not None and earlier.status == activities.SUCCESS else None
    captured = await capture_webhook_response(session, settings, bus, user, konnect.id)
    if captured.message == "SUCCESS":
        received = captured.raw_response
    has_data = isinstance(received, dict) and bool(received)
    return ScriptTriggerOut(
        script_id=konnect.id,
        konnect_id=konnect.id,
        app_name=app.name,
        event_label=event.label,
        platform=script.platform,
        install=list(script.install),
        source=script.source.replace("{{webhook_url}}", url),
        webhook_url=url,
        status=RECEIVED if has_data else WAITING,
        display_message=(
            "The script sent a response: it is the trigger's data"
            if has_data
            else f"Waiting for the script's first request to {url}"
        ),
        raw_response=received if has_data else None,
    )
