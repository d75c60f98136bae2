"""The api's part of compiling canvas nodes: dispatch by provider, and the catalogue apps.

A step or trigger kind compiles its own nodes in its contract module (``compile_node`` /
``compile_trigger`` in :mod:`konnectz_contracts.steps` / :mod:`konnectz_contracts.triggers`, found
by discovery: :data:`~konnectz_contracts.steps.COMPILERS`,
:data:`~konnectz_contracts.triggers.COMPILERS`). What needs the catalogue stays here:

- an action of a catalogue app whose event names a ``step_kind`` (Ask AI on a model provider's app) →
  that kind's ``compile_node`` (the node holds the app, the account and the fields as below);
- an action of a catalogue app (a manifest event) → the ``app_event`` step (:func:`compile_app_event`):
  which app: ``app_detail.id`` (the catalogue id) whose key equals ``app_detail.provider``; which
  event: ``selectedEvent.id``; which account: ``selectedAccount.id`` (when the app needs one); the
  field values: ``configResponses`` (config_key → value). Credentials are not in the step: the
  runner fetches them from the api's credential broker at run time.
- the trigger node of a catalogue app (:func:`compile_app_trigger`): a trigger event with
  ``trigger: {type: polling}`` compiles to the runner's ``polling`` trigger naming the app, the
  event, the account and the field values
  (:class:`~konnectz_contracts.triggers.polling.PollingTrigger` with ``app_id``): the runner polls
  that event through the generic HTTP step with credentials it fetches from the api's credential
  broker at poll time, and keeps the manifest's de-duplication (``dedupe``, ``id_path``,
  ``timestamp_path``, ``since_param``, ``since_format``, ``max_seen``) and interval. Credentials are
  never in the spec. A trigger event with ``trigger: {type: webhook}`` compiles to the runner's
  ``webhook`` trigger with the manifest's ``signature``; publishing subscribes the konnect's URL at
  the app (:mod:`konnectz_api.services.app_webhooks`).
- a catalogue trigger whose event is fed by a script the user installs inside the app (a manifest
  event with ``trigger: {type: script, ...}``; the service is
  :mod:`konnectz_api.services.script_triggers`): published, it is a webhook trigger on the
  konnect's URL (:func:`compile_script_trigger`).

Known providers that do not run yet are in :data:`PENDING`. A node's timer (Set Delay,
``data.timerConfigs``) compiles to a delay step *before* the node's own step: :func:`compile_step`
may return a list of steps for one node. Errors are :class:`CompileError` naming the node.
"""

from __future__ import annotations

from typing import Any

from konnectz_api import catalogue  # looked up at each call (catalogue.get_index): the tests swap the index
from konnectz_contracts.canvas import Node
from konnectz_contracts.compiling import CompileError, TriggerInput, config_values, fail, validated
from konnectz_contracts.manifest import App, Event, Polling, ScriptTrigger, WebhookSubscription
from konnectz_contracts.spec import KeyValue
from konnectz_contracts.steps import COMPILERS as STEP_COMPILERS
from konnectz_contracts.steps import KINDS as STEP_KINDS
from konnectz_contracts.steps import delay
from konnectz_contracts.steps.app_event import AppEventStep
from konnectz_contracts.triggers import COMPILERS as TRIGGER_COMPILERS
from konnectz_contracts.triggers.polling import PollingTrigger
from konnectz_contracts.triggers.webhook import WebhookTrigger

__all__ = [
    "PENDING",
    "STEP_COMPILERS",
    "TRIGGER_COMPILERS",
    "CompileError",
    "TriggerInput",
    "catalogue_app",
    "compile_app_event",
    "compile_app_trigger",
    "compile_script_trigger",
    "compile_step",
    "compile_trigger",
    "config_values",
    "script_of",
]

# Known providers that do not run yet (none today).
PENDING: dict[str, str] = {}


def catalogue_app(node: Node) -> Any | None:
    """The catalogue app of ``node``, if it is one (an ``api`` app whose key is the node's provider)."""
    detail = node.detail
    raw_id = str(detail.id if detail.id is not None else "")
    app = catalogue.get_index().get(int(raw_id)) if raw_id.isdigit() and len(raw_id) < 19 else None
    if app is None or app.app_type != "api" or app.key != node.provider:
        return None
    return app


def compile_app_event(node: Node) -> AppEventStep:
    """The ``app_event`` step of an action of a catalogue app."""
    app = catalogue_app(node)
    if app is None:
        raise fail(node, f"app {node.provider[:50]!r} cannot run yet")
    event = node.data.selectedEvent or {}
    if app.event(str(event.get("id", ""))) is None:
        raise fail(node, "choose an event")
    account = (node.data.model_extra or {}).get("selectedAccount") or {}
    account_id = account.get("id") if isinstance(account, dict) else None
    if app.needs_account and not (str(account_id or "").isdigit() and 1 <= int(str(account_id)) < 2**63):
        raise fail(node, "choose an account")
    fields = []
    for entry in node.data.configResponses or ():
        value = entry.value
        if isinstance(value, dict) and "value" in value:
            value = value["value"]
        if entry.config_key and value not in (None, ""):
            fields.append(KeyValue(key=str(entry.config_key), value=value if isinstance(value, str) else str(value)))
    return AppEventStep(
        id=node.id,
        name=node.detail.name.strip() or app.name,
        app_id=app.id,
        event=str(event["id"]),
        account_id=int(str(account_id)) if app.needs_account else None,
        fields=fields,
    )


def is_app_trigger(node: Node) -> bool:
    return catalogue_app(node) is not None


def compile_app_trigger(node: Node, given: TriggerInput) -> PollingTrigger | WebhookTrigger:
    """The polling or webhook trigger of a catalogue app's trigger node."""
    app = catalogue_app(node)
    if app is None:
        raise fail(node, f"trigger app {node.provider[:50]!r} cannot be published yet")
    event = app.event(str((node.data.selectedEvent or {}).get("id", "")))
    if event is None or event.kind != "trigger":
        raise fail(node, "choose a trigger event")
    strategy = event.trigger
    step = compile_app_event(node)  # the same event, account and field checks as an action of this app
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


def script_of(node: Node) -> tuple[App, Event, ScriptTrigger] | None:
    """The app, event and script of a trigger node whose chosen event is a custom-script trigger."""
    app = catalogue_app(node)
    if app is None:
        return None
    chosen = node.data.selectedEvent or {}
    event = app.event(str(chosen.get("id", ""))) if isinstance(chosen, dict) else None
    if event is None or not isinstance(event.trigger, ScriptTrigger):
        return None
    return app, event, event.trigger


def compile_script_trigger(node: Node, given: TriggerInput) -> WebhookTrigger | None:
    """A custom-script trigger runs as a webhook trigger on the konnect's URL; None for other nodes."""
    return WebhookTrigger(token=given.webhook_token) if script_of(node) is not None else None


def _event_compiler(app: App, node: Node) -> Any:
    """An action of a catalogue app: its step kind's compiler when a step kind runs the event (Ask AI on a
    model provider's app), else the generic ``app_event`` step."""
    chosen = node.data.selectedEvent or {}
    event = app.event(str(chosen.get("id", ""))) if isinstance(chosen, dict) else None
    if event is not None and event.step_kind is not None:
        kind = STEP_KINDS.get(event.step_kind)
        if kind is None:
            raise fail(node, f"{event.label} cannot run yet")
        return kind.compile_node
    return compile_app_event


def compile_step(node: Node) -> Any:
    """The runner step of an action node."""
    compiler = STEP_COMPILERS.get(node.provider)
    if compiler is None and (app := catalogue_app(node)) is not None:
        compiler = _event_compiler(app, node)
    if compiler is None:
        raise fail(node, PENDING.get(node.provider, f"app {node.provider[:50]!r} cannot run yet"))
    step = compiler(node)
    timer = delay.timer_of(node)
    ready = (node.data.model_extra or {}).get("delayReady")
    if node.provider in delay.PROVIDERS or timer is None or timer.get("delay_type") in (None, "") or ready is False:
        return step
    # Set Delay: the node's timer runs before the node's own step.
    return [delay.delay_step(node, timer, step_id=f"{node.id}-delay"), step]


def compile_trigger(node: Node, given: TriggerInput) -> Any:
    """The runner trigger of the trigger node."""
    compiler = TRIGGER_COMPILERS.get(node.provider)
    if compiler is None:
        # A catalogue trigger fed by a script the user installs runs as a webhook on the konnect's URL.
        if (scripted := compile_script_trigger(node, given)) is not None:
            return scripted
    if compiler is None and is_app_trigger(node):
        compiler = compile_app_trigger
    if compiler is None:
        message = PENDING.get(node.provider, f"trigger app {node.provider[:50]!r} cannot be published yet")
        raise fail(node, message)
    return compiler(node, given)
