"""A catalogue trigger whose event is fed by a script the user installs inside the app (a manifest
event with ``trigger: {type: script, ...}``; the service is :mod:`konnectz_api.services.script_triggers`).

Published, such a trigger is a webhook trigger on the konnect's URL (:func:`compile_trigger`).
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import TriggerInput
from konnectz_api.compilers.app_event import catalogue_app
from konnectz_contracts.manifest import App, Event, ScriptTrigger
from konnectz_contracts.triggers import WebhookTrigger

__all__ = ["compile_trigger", "script_of"]


def script_of(node: Any) -> tuple[App, Event, ScriptTrigger] | None:
    """The app, event and script of a trigger node whose chosen event is a custom-script trigger."""
    app = catalogue_app(node)
    if app is None:
        return None
    chosen = node.data.selectedEvent or {}
    event = app.event(str(chosen.get("id", ""))) if isinstance(chosen, dict) else None
    if event is None or not isinstance(event.trigger, ScriptTrigger):
        return None
    return app, event, event.trigger


def compile_trigger(node: Any, given: TriggerInput) -> WebhookTrigger | None:
    """A custom-script trigger runs as a webhook trigger on the konnect's URL; None for other nodes."""
    return WebhookTrigger(token=given.webhook_token) if script_of(node) is not None else None
