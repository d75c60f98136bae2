"""A node of a catalogue app (a manifest event) → the runner's ``app_event`` step.

Which app: ``app_detail.id`` (the catalogue id) whose key equals ``app_detail.provider``; which
event: ``selectedEvent.id``; which account: ``selectedAccount.id`` (when the app needs one); the
field values: ``configResponses`` (config_key → value). Credentials are not in the step: the
runner fetches them from the api's credential broker at run time.
"""

from __future__ import annotations

from typing import Any

from konnectz_api import catalogue  # looked up at each call (catalogue.get_index): the tests swap the index
from konnectz_api.compilers._common import fail
from konnectz_contracts.spec import KeyValue
from konnectz_contracts.steps.app_event import AppEventStep


def catalogue_app(node: Any) -> Any | None:
    """The catalogue app of ``node``, if it is one (an ``api`` app whose key is the node's provider)."""
    detail = node.detail
    raw_id = str(detail.id if detail.id is not None else "")
    app = catalogue.get_index().get(int(raw_id)) if raw_id.isdigit() and len(raw_id) < 19 else None
    if app is None or app.app_type != "api" or app.key != node.provider:
        return None
    return app


def compile_node(node: Any) -> AppEventStep:
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
