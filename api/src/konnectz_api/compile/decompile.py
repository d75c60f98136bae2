"""A flow spec back into an editor document (canvas_json), for flows that come from the cluster.

A Konnect applied or edited with kubectl holds a compiled flow, not a canvas. The api imports it
(:mod:`konnectz_api.services.cluster_sync`) and needs a canvas the editor can open and publish again:

- a node whose compiled step did not change keeps its canvas node as it was (position, the
  editor's own fields);
- the webhook trigger and the API Call step, the kinds written by hand in YAML, are rebuilt
  from the spec so that compiling the canvas gives the same flow back;
- a router and its join are rebuilt too (their paths as the editor keeps them), and the links
  follow the paths: the router links to the first node of each path with ``sourceHandle`` = the
  path's id, the last node of each path (or the router, for an empty path) links to the join;
- any other changed or new kind becomes a node carrying its step's settings as
  ``selectedValue``: the flow list and the run show it; edit such steps with kubectl.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.steps import join, router
from konnectz_contracts.steps.api_call import ApiCallStep
from konnectz_contracts.steps.filter import LABELS
from konnectz_contracts.triggers import WebhookTrigger

__all__ = ["canvas_of"]

_WEBHOOK = {"id": 1, "name": "Webhook", "provider": "webhook", "app_type": "WEBHOOK"}
_API = {"id": 2, "name": "API Call", "provider": "api", "app_type": "ADD_ON"}
_GAP = 600  # horizontal distance between nodes laid out here, as the editor places them


def _pairs(entries: Any) -> list[dict[str, str]]:
    return [{"key": e.key, "value": e.value} for e in entries]


def _trigger_node(flow: FlowSpec) -> dict[str, Any]:
    trigger = flow.trigger
    detail = {**_WEBHOOK, "app_index": 1, "side": "left"}
    data: dict[str, Any] = {"app_detail": detail}
    node_type = "WebhookInner"
    if not isinstance(trigger, WebhookTrigger) or trigger.app:
        detail = {"name": trigger.kind.capitalize(), "provider": trigger.kind, "app_index": 1, "side": "left"}
        data = {"app_detail": detail, "selectedValue": trigger.model_dump(mode="json", exclude={"token"})}
        node_type = "Imported"
    return {"id": flow.trigger_id, "type": node_type, "data": data}


def _step_node(step: Any, index: int) -> dict[str, Any]:
    if isinstance(step, ApiCallStep):
        details = {
            "method": step.method,
            "endpointURL": step.url,
            "params": _pairs(step.params),
            "headers": _pairs(step.headers),
            "body": _pairs(step.body),
        }
        wrap = "YES" if step.wrap_in_array else "NO"
        selected = {"wrap_in_array": wrap, "payload_type": "JSON", "apiDetails": details}
        detail = {**_API, "name": step.name or _API["name"], "app_index": index, "side": "right"}
        return {"id": step.id, "type": "Api", "data": {"app_detail": detail, "selectedValue": selected}}
    detail = {"name": step.name or step.kind, "provider": step.kind, "app_index": index, "side": "right"}
    if isinstance(step, router.Config):
        paths = [
            {
                "id": f"path-{number}",
                "name": path.name,
                "otherwise": path.otherwise,
                "conditions": [
                    {
                        "field": c.field,
                        "operator": LABELS[c.operator],
                        "valueOfFilter": c.value,
                        "queryOperator": c.join,
                    }
                    for c in path.conditions
                ],
            }
            for number, path in enumerate(step.paths, start=1)
        ]
        return {
            "id": step.id,
            "type": "router",
            "data": {"app_detail": detail, "routerMode": step.mode, "routerPaths": paths},
        }
    if isinstance(step, join.Config):
        return {"id": step.id, "type": "join", "data": {"app_detail": detail, "joinWait": step.wait}}
    data = {"app_detail": detail, "selectedValue": step.model_dump(mode="json")}
    return {"id": step.id, "type": "Imported", "data": data}


def _links(flow: FlowSpec) -> list[dict[str, Any]]:
    """The links of ``flow``: one after another, except a router's paths (see the module docs)."""
    links: list[dict[str, Any]] = []
    tails: list[tuple[str, str | None]] = [(flow.trigger_id, None)]

    def link(source: tuple[str, str | None], target: str) -> None:
        links.append({"source": source[0], "target": target} | ({"sourceHandle": source[1]} if source[1] else {}))

    steps = list(flow.steps)
    position = 0
    while position < len(steps):
        step = steps[position]
        for tail in tails:
            link(tail, step.id)
        tails = [(step.id, None)]
        position += 1
        if not isinstance(step, router.Config):
            continue
        ends: list[tuple[str, str | None]] = []
        for number, path in enumerate(step.paths, start=1):
            end: tuple[str, str | None] = (step.id, f"path-{number}")
            for step_id in path.steps:
                link(end, step_id)
                end = (step_id, None)
            ends.append(end)
        position += sum(len(path.steps) for path in step.paths)
        tails = ends if position < len(steps) and steps[position].kind == "join" else []
    return links


def canvas_of(
    flow: FlowSpec, previous: dict[str, Any] | None = None, *, unchanged: Set[str] = frozenset()
) -> dict[str, Any]:
    """The canvas of ``flow``; nodes named in ``unchanged`` are taken from ``previous`` as they were."""
    old = {str(n.get("id")): n for n in (previous or {}).get("apps") or [] if isinstance(n, dict)}
    nodes: list[dict[str, Any]] = []
    built = [_trigger_node(flow), *(_step_node(step, i + 2) for i, step in enumerate(flow.steps))]
    for i, node in enumerate(built):
        kept = old.get(node["id"])
        if kept is not None and node["id"] in unchanged:
            nodes.append(kept)
            continue
        position = kept.get("position") if kept is not None else None
        nodes.append({**node, "position": position or {"x": i * _GAP, "y": 0}})
    ids = [n["id"] for n in nodes]
    links = _links(flow)
    previous_links = (previous or {}).get("links")
    if set(old) == set(ids) and isinstance(previous_links, list) and unchanged >= set(ids[1:]):
        links = previous_links  # same nodes, same steps: keep the author's links (branches included)
    selects = (previous or {}).get("dataForSelect") or {}
    return {"flowName": flow.name, "dataForSelect": selects, "links": links, "apps": nodes}
