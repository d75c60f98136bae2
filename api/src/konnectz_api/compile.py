"""Compile an editor document (canvas_json) into the runner's FlowSpec.

The editor document is not what runs: publishing validates the canvas and produces a
small FlowSpec (owned by ``konnectz_runner.spec``). Every problem becomes a
:class:`CompileError` whose message tells the user which node to fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from konnectz_runner.spec import ApiCallStep, FlowSpec, KeyValue, WebhookTrigger
from konnectz_runner.steps.app_event import AppEventStep

TRIGGER_NOT_CHOSEN = "Trigger not chosen"


class CompileError(ValueError):
    pass


def _nodes(canvas: dict[str, Any]) -> list[dict[str, Any]]:
    apps = canvas.get("apps")
    if not isinstance(apps, list):
        raise CompileError("canvas_json.apps must be a list of nodes")
    nodes = [n for n in apps if isinstance(n, dict)]
    if len(nodes) != len(apps):
        raise CompileError("canvas_json.apps must contain node objects")
    return nodes


def _detail(node: dict[str, Any]) -> dict[str, Any]:
    data = node.get("data") if isinstance(node.get("data"), dict) else {}
    detail = data.get("app_detail") if isinstance(data, dict) else None
    return detail if isinstance(detail, dict) else {}


def find_trigger(canvas: dict[str, Any]) -> dict[str, Any] | None:
    """The trigger node: ``app_index`` 1 (or side left); None when no trigger was chosen."""
    for node in _nodes(canvas):
        detail = _detail(node)
        if detail.get("app_index") == 1 or detail.get("side") == "left":
            return node
    return None


def app_names(canvas: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(trigger app name, action app names) for list views."""
    try:
        nodes = _nodes(canvas)
    except CompileError:
        return None, []
    trigger = find_trigger(canvas)
    left = _detail(trigger).get("name") if trigger else None
    right = [str(_detail(n).get("name", "")) for n in _ordered_actions(canvas, nodes, trigger)]
    return (str(left) if left else None), right


def _ordered_actions(
    canvas: dict[str, Any], nodes: list[dict[str, Any]], trigger: dict[str, Any] | None
) -> list[dict[str, Any]]:
    actions = [n for n in nodes if n is not trigger]
    return sorted(actions, key=lambda n: (_detail(n).get("app_index") or 10**6, str(n.get("id"))))


def _key_values(entries: Any, what: str, node_label: str) -> list[KeyValue]:
    if entries in (None, ""):
        return []
    if not isinstance(entries, list):
        raise CompileError(f"{node_label}: {what} must be a list of key/value entries")
    out: list[KeyValue] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise CompileError(f"{node_label}: {what} must be a list of key/value entries")
        key = str(entry.get("key") or "").strip()
        value = entry.get("value")
        if not key:
            if value not in (None, ""):
                raise CompileError(f"{node_label}: a {what} entry has a value but no key")
            continue
        out.append(KeyValue(key=key, value="" if value is None else str(value)))
    return out


def _compile_api_node(node: dict[str, Any], label: str) -> ApiCallStep:
    data = node.get("data") or {}
    selected = data.get("selectedValue") or {}
    if not isinstance(selected, dict):
        raise CompileError(f"{label}: selectedValue must be an object")
    details = selected.get("apiDetails") or {}
    if not isinstance(details, dict):
        raise CompileError(f"{label}: apiDetails must be an object")
    url = str(details.get("endpointURL") or "").strip()
    if not url:
        raise CompileError(f"{label}: the Endpoint URL is required")
    if not (url.startswith(("http://", "https://")) or url.startswith("{{")):
        raise CompileError(f"{label}: the Endpoint URL must start with http:// or https://")
    method = str(details.get("method") or "POST").upper()
    if method not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        raise CompileError(f"{label}: unsupported method {method!r}")
    payload_type = str(selected.get("payload_type") or "JSON").upper()
    if payload_type != "JSON":
        raise CompileError(f"{label}: Payload Type must be JSON")
    wrap = str(selected.get("wrap_in_array") or "NO").upper()
    if wrap not in ("NO", "YES"):
        raise CompileError(f"{label}: Wrap Request in Array must be NO or YES")
    return ApiCallStep(
        id=str(node["id"]),
        name=str(_detail(node).get("name") or "API Call"),
        method=method,
        url=url,
        headers=_key_values(details.get("headers"), "header", label),
        params=_key_values(details.get("params"), "param", label),
        body=_key_values(details.get("body"), "body", label),
        payload_type="JSON",
        wrap_in_array=wrap == "YES",
    )


STEP_COMPILERS = {"api": _compile_api_node}


def _compile_app_event(node: dict[str, Any], label: str) -> AppEventStep:
    """A node of a catalogue app (a manifest event): its event, account and configuration values."""
    from konnectz_api.catalogue import get_index

    data = node.get("data") or {}
    detail = _detail(node)
    event = data.get("selectedEvent") or {}
    account = data.get("selectedAccount") or {}
    app = get_index().get(int(detail["id"])) if str(detail.get("id", "")).isdigit() else None
    if app is None or app.event(str(event.get("id", ""))) is None:
        raise CompileError(f"{label}: choose an event")
    account_id = account.get("id")
    if app.needs_account and not str(account_id or "").isdigit():
        raise CompileError(f"{label}: choose an account")
    fields = []
    for entry in data.get("configResponses") or []:
        if isinstance(entry, dict) and entry.get("config_key") and entry.get("value") not in (None, ""):
            value = entry["value"]
            fields.append(KeyValue(key=str(entry["config_key"]), value=value if isinstance(value, str) else str(value)))
    return AppEventStep(
        id=str(node["id"]),
        name=str(detail.get("name") or app.name),
        app_id=app.id,
        event=str(event["id"]),
        account_id=int(str(account_id)) if app.needs_account else None,
        fields=fields,
    )


def _is_catalogue_app(detail: dict[str, Any]) -> bool:
    from konnectz_api.catalogue import get_index

    app = get_index().get(int(detail["id"])) if str(detail.get("id", "")).isdigit() else None
    return app is not None and app.app_type == "api" and app.key == detail.get("provider")


def compile_flow(canvas: dict[str, Any], *, konnect_id: int, owner_id: int, name: str, webhook_token: str) -> FlowSpec:
    nodes = _nodes(canvas)
    ids = [str(n.get("id") or "") for n in nodes]
    if any(not i for i in ids):
        raise CompileError("every node needs an id")
    if len(set(ids)) != len(ids):
        raise CompileError("node ids must be unique")
    trigger = find_trigger(canvas)
    if trigger is None:
        raise CompileError(TRIGGER_NOT_CHOSEN)
    provider = _detail(trigger).get("provider")
    if provider != "webhook":
        raise CompileError(f"Trigger app {provider!r} cannot be published yet: only Webhook triggers run")
    actions = _ordered_actions(canvas, nodes, trigger)
    if not actions:
        raise CompileError("Add at least one action after the trigger before publishing")
    steps = []
    for index, node in enumerate(actions, start=2):
        detail = _detail(node)
        label = f"Step {index} ({detail.get('name') or node.get('id')})"
        compiler: Callable[[dict[str, Any], str], Any] | None = STEP_COMPILERS.get(str(detail.get("provider")))
        if compiler is None and _is_catalogue_app(detail):
            compiler = _compile_app_event
        if compiler is None:
            raise CompileError(f"{label}: app {detail.get('provider')!r} cannot run yet")
        steps.append(compiler(node, label))
    try:
        return FlowSpec(
            konnect_id=konnect_id,
            owner_id=owner_id,
            name=name,
            trigger_id=str(trigger["id"]),
            trigger=WebhookTrigger(token=webhook_token),
            steps=steps,
        )
    except ValidationError as exc:
        raise CompileError(f"invalid flow: {exc.errors()[0]['msg']}") from exc
