"""The trigger node of a catalogue app (a manifest trigger event) → the runner's trigger.

A trigger event with ``trigger: {type: polling}`` compiles to the runner's ``polling`` trigger
naming the app, the event, the account and the field values
(:class:`~konnectz_contracts.triggers.polling.PollingTrigger` with ``app_id``): the runner polls that
event through the generic HTTP step with credentials it fetches from the api's credential broker at
poll time, and keeps the manifest's de-duplication (``dedupe``, ``id_path``, ``timestamp_path``,
``since_param``, ``since_format``, ``max_seen``) and interval. Credentials are never in the spec.

A trigger event with ``trigger: {type: webhook}`` compiles to the runner's ``webhook`` trigger with
the manifest's ``signature``; publishing subscribes the konnect's URL at the app
(:mod:`konnectz_api.services.app_webhooks`).

Which app, event and account: as for actions (:mod:`konnectz_api.compilers.app_event`).
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import TriggerInput, fail, validated
from konnectz_api.compilers.app_event import catalogue_app, compile_node
from konnectz_contracts.manifest import Polling, WebhookSubscription
from konnectz_contracts.triggers.polling import PollingTrigger
from konnectz_contracts.triggers.webhook import WebhookTrigger

__all__ = ["PROVIDERS", "compile_trigger", "is_app_trigger"]

# Catalogue apps are found by their node (the app id and its key), not by a fixed provider name.
PROVIDERS: tuple[str, ...] = ()


def is_app_trigger(node: Any) -> bool:
    return catalogue_app(node) is not None


def compile_trigger(node: Any, given: TriggerInput) -> PollingTrigger | WebhookTrigger:
    app = catalogue_app(node)
    if app is None:
        raise fail(node, f"trigger app {node.provider[:50]!r} cannot be published yet")
    event = app.event(str((node.data.selectedEvent or {}).get("id", "")))
    if event is None or event.kind != "trigger":
        raise fail(node, "choose a trigger event")
    strategy = event.trigger
    step = compile_node(node)  # the same event, account and field checks as an action of this app
    if isinstance(strategy, WebhookSubscription):
        # The api subscribes the konnect's URL at the app when publishing (konnectz_api.services.app_webhooks).
        return WebhookTrigger(token=given.webhook_token, app=app.key, event=event.key, signature=strategy.signature)
    if not isinstance(strategy, Polling):
        raise fail(node, f"{event.label}: this trigger cannot be published")
    return validated(
        PollingTrigger,
        node,
        app=app.key,
        event=event.key,
        app_id=app.id,
        account_id=step.account_id,
        event_fields=step.fields,
        items_path=event.output.items_path or "",
        dedupe=strategy.dedupe,
        id_path=strategy.id_path,
        timestamp_path=strategy.timestamp_path,
        since_param=strategy.since_param,
        since_format=strategy.since_format,
        interval_seconds=min(max(strategy.interval_seconds, 10), 7 * 86400),
        max_seen=strategy.max_seen,
    )
