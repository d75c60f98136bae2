"""The canvas in run order: its trigger and its actions following the links (not ``app_index``).

Pure and below the models: the ``konnects.app_names`` column is derived from a canvas with
:func:`konnect_app_names` whenever ``canvas_json`` is set (:mod:`konnectz_api.models`), and the
compiler (:mod:`konnectz_api.compile`) and Test & Review order the nodes with :func:`plan`.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from konnectz_contracts.canvas import Canvas, CompileError, NodeParseError, fail, parse_canvas

__all__ = [
    "BACKWARD",
    "SAME_SOURCE_AND_TARGET",
    "TRIGGER_NOT_CHOSEN",
    "Plan",
    "app_names",
    "find_trigger",
    "konnect_app_names",
    "plan",
]

TRIGGER_NOT_CHOSEN = "Trigger not chosen"
SAME_SOURCE_AND_TARGET = "The same app cannot serve as both the source and the target for a particular app."
BACKWARD = "Can not be move backward as Action app exists"


class Plan:
    """The typed canvas with its trigger and the action nodes in run order (following the links)."""

    def __init__(self, canvas: Canvas, trigger: Any, actions: list[Any], parents: dict[str, set[str]]) -> None:
        self.canvas = canvas
        self.trigger = trigger
        self.actions = actions
        self.parents = parents

    def ancestors(self, node_id: str) -> set[str]:
        """Node ids whose outputs ``node_id`` may use: everything upstream of it along the links."""
        seen: set[str] = set()
        todo = [node_id]
        while todo:
            for parent in self.parents.get(todo.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen


def _parse(raw: Any) -> Canvas:
    try:
        return parse_canvas(raw)
    except NodeParseError as exc:
        raise CompileError(str(exc)) from exc


def _sort_key(node: Any) -> tuple[int, float, str]:
    x = node.position.get("x") if isinstance(node.position, dict) else None
    return (
        node.detail.app_index if node.detail.app_index is not None else 10**6,
        float(x) if isinstance(x, int | float) and not isinstance(x, bool) else 0.0,
        node.id,
    )


def plan(raw: Any, *, require_linked: bool = True) -> Plan:
    """Parse and order ``raw``; with ``require_linked`` every action must hang off the trigger."""
    canvas = _parse(raw)
    by_id: dict[str, Any] = {}
    for node in canvas.apps:
        if node.id in by_id:
            raise CompileError(f"node ids must be unique: {node.id!r} is used twice")
        by_id[node.id] = node
    triggers = [n for n in canvas.apps if n.is_trigger]
    if not triggers:
        raise CompileError(TRIGGER_NOT_CHOSEN)
    if len(triggers) > 1:
        raise fail(triggers[1], "a flow has one trigger; make this node an action")
    trigger = triggers[0]
    children: dict[str, list[str]] = {n.id: [] for n in canvas.apps}
    parents: dict[str, set[str]] = {n.id: set() for n in canvas.apps}
    for link in canvas.links:
        for end in (link.source, link.target):
            if end not in by_id:
                raise CompileError(f"a link points to the unknown node {end[:100]!r}")
        if link.source == link.target:
            raise fail(by_id[link.source], SAME_SOURCE_AND_TARGET)
        if link.target == trigger.id:
            raise fail(by_id[link.source], BACKWARD)
        if link.target not in children[link.source]:
            children[link.source].append(link.target)
            parents[link.target].add(link.source)
    # Kahn's algorithm over what the trigger reaches; ties in canvas order (app_index, then x).
    reached = {trigger.id}
    todo = deque([trigger.id])
    while todo:
        for child in children[todo.popleft()]:
            if child not in reached:
                reached.add(child)
                todo.append(child)
    waiting = {nid: len(parents[nid] & reached) for nid in reached}
    ready = [trigger.id]
    order: list[str] = []
    while ready:
        ready.sort(key=lambda nid: _sort_key(by_id[nid]))
        current = ready.pop(0)
        order.append(current)
        for child in children[current]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    if len(order) != len(reached):
        looped = next(by_id[nid] for nid in sorted(reached - set(order)))
        raise fail(looped, "the links form a loop")
    actions = [by_id[nid] for nid in order[1:]]
    unlinked = sorted((n for n in canvas.apps if n.id not in reached), key=_sort_key)
    if unlinked:
        if require_linked:
            raise fail(unlinked[0], "link this node into the flow after the trigger")
        actions += unlinked
    return Plan(canvas, trigger, actions, parents)


# --- tolerant helpers for drafts (lists, save) ----------------------------------------------------
def _raw_detail(node: Any) -> dict[str, Any]:
    data: dict[str, Any] = node["data"] if isinstance(node, dict) and isinstance(node.get("data"), dict) else {}
    detail = data.get("app_detail")
    return detail if isinstance(detail, dict) else {}


def find_trigger(canvas: dict[str, Any]) -> dict[str, Any] | None:
    """The trigger node of a draft (``app_index`` 1 or side left); None when no trigger was chosen."""
    apps = canvas.get("apps") if isinstance(canvas, dict) else None
    for node in apps if isinstance(apps, list) else ():
        detail = _raw_detail(node)
        if detail.get("app_index") == 1 or detail.get("side") == "left":
            return node if isinstance(node, dict) else None
    return None


def app_names(canvas: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(trigger app name, action app names in run order) for list views; tolerant of broken drafts."""
    try:
        flow = plan(canvas, require_linked=False)
    except CompileError:
        trigger = find_trigger(canvas)
        apps = canvas.get("apps") if isinstance(canvas, dict) else None
        if not isinstance(apps, list):
            return None, []
        left = _raw_detail(trigger).get("name") if trigger else None
        right = [str(_raw_detail(n).get("name") or "") for n in apps if n is not trigger]
        return (str(left) if left else None), right
    return (flow.trigger.detail.name or None), [n.detail.name for n in flow.actions]


def konnect_app_names(canvas: Any) -> dict[str, Any]:
    """The ``app_names`` column's value for a canvas (:func:`app_names`)."""
    left, right = app_names(canvas)
    return {"left": left, "right": right}
