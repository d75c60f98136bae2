"""The canvas in run order: its trigger and its actions following the links (not ``app_index``).

Pure and below the models: the ``konnects.app_names`` column is derived from a canvas with
:func:`konnect_app_names` whenever ``canvas_json`` is set (:mod:`konnectz_api.models`), and the
compiler (:mod:`konnectz_api.compile.flow`) and Test & Review order the nodes with :func:`plan`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from konnectz_contracts.canvas import Canvas, CompileError, Node, NodeParseError, fail, parse_canvas
from konnectz_contracts.steps import join as join_kind
from konnectz_contracts.steps import router as routers

__all__ = [
    "BACKWARD",
    "SAME_SOURCE_AND_TARGET",
    "TRIGGER_NOT_CHOSEN",
    "PathPlan",
    "Plan",
    "RouterPlan",
    "app_names",
    "find_trigger",
    "konnect_app_names",
    "plan",
    "router_plans",
    "run_order",
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


def _sort_key(node: Node) -> tuple[int, float, str]:
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


# --- paths that join: a router's paths (by the links' sourceHandle) and its join ---------------------
@dataclass
class PathPlan:
    """One path of a router: its canvas entry and its nodes in run order (empty: straight to the join)."""

    id: str
    name: str
    nodes: list[Any] = field(default_factory=list)
    joined: bool = False  # it reaches the join (an empty path without a link does not, but runs as empty)


@dataclass
class RouterPlan:
    router: Any
    paths: list[PathPlan]
    join: Any | None = None


def _path_key(path: Any, number: int) -> str:
    return path.id.strip() or path.name.strip() or f"path-{number}"


def router_plans(flow: Plan) -> dict[str, RouterPlan]:
    """Each router node's paths and join, following the links; :class:`CompileError` names what is wrong.

    A router's link to a path carries ``sourceHandle`` = the path's id; a path without a link is
    empty. A path is a line of nodes (each with one incoming and at most one outgoing link) that
    ends at the router's join (or, for a router without a join, ends the flow). Only a join may
    have several incoming links among path nodes.
    """
    by_id = {n.id: n for n in flow.canvas.apps}
    out: dict[str, list[Any]] = {n.id: [] for n in flow.canvas.apps}
    for edge in flow.canvas.links:
        same = ((other.target, other.sourceHandle) for other in out.get(edge.source, ()))
        if edge.source in out and (edge.target, edge.sourceHandle) not in same:
            out[edge.source].append(edge)
    plans: dict[str, RouterPlan] = {}
    owner: dict[str, str] = {}  # path node id -> "router/path" that holds it
    for router in (n for n in flow.canvas.apps if routers.is_router(n)):
        raw_paths = routers.canvas_paths(router)
        keys = [_path_key(p, i) for i, p in enumerate(raw_paths, start=1)]
        by_handle: dict[str, Any] = {}
        for link in out[router.id]:
            handle = (link.sourceHandle or "").strip()
            if handle not in keys:
                target = by_id[link.target].label
                if not handle:
                    raise fail(router, f"the link to {target} starts from no path: link it from one of the paths")
                raise fail(router, f"the link to {target} starts from path {handle[:50]!r}, which it does not have")
            if handle in by_handle:
                raise fail(
                    router, f"path {raw_paths[keys.index(handle)].name.strip()} has two links: a path is one line"
                )
            by_handle[handle] = link
        paths: list[PathPlan] = []
        joins: set[str] = set()
        for raw, key in zip(raw_paths, keys, strict=True):
            name = raw.name.strip() or key
            path = PathPlan(id=key, name=name)
            first = by_handle.get(key)
            current: Any = by_id[first.target] if first is not None else None
            previous = router
            while current is not None:
                if join_kind.is_join(current):
                    joins.add(current.id)
                    path.joined = True
                    break
                if routers.is_router(current):
                    raise fail(current, f"a router cannot be inside a path (path {name} of {router.label})")
                if current.id in owner:
                    raise fail(
                        current,
                        f"reached from two paths ({owner[current.id]} and {name}): "
                        "only a join can have several incoming links",
                    )
                if len(flow.parents.get(current.id, ())) > 1:
                    others = sorted(flow.parents[current.id] - {previous.id})
                    raise fail(
                        current,
                        f"on path {name} of {router.label}, it also has a link from {others[0]}: "
                        "only a join can have several incoming links",
                    )
                owner[current.id] = name
                path.nodes.append(current)
                nexts = out[current.id]
                if len(nexts) > 1:
                    raise fail(current, f"on path {name}, it links to two nodes: a path is one line (add a router)")
                previous, current = current, (by_id[nexts[0].target] if nexts else None)
            paths.append(path)
        if len(joins) > 1:
            raise fail(router, "its paths end at two different joins: link every path to the same join")
        join = by_id[joins.pop()] if joins else None
        if join is not None:
            for path in paths:
                if path.nodes and not path.joined:
                    raise fail(path.nodes[-1], f"path {path.name} ends here: link its last node to {join.label}")
            ends = {p.nodes[-1].id if p.nodes else router.id for p in paths}
            strangers = sorted(flow.parents.get(join.id, set()) - ends)
            if strangers:
                raise fail(join, f"{by_id[strangers[0]].label} is not the end of a path of {router.label}")
            if len(out[join.id]) > 1:
                raise fail(join, "a join has one outgoing link (the rest of the flow)")
        plans[router.id] = RouterPlan(router=router, paths=paths, join=join)
    joined = {p.join.id for p in plans.values() if p.join is not None}
    for node in flow.actions:
        if join_kind.is_join(node) and node.id not in joined:
            raise fail(node, "a join closes the paths of a router: link the end of each path of a router to it")
    return plans


def run_order(flow: Plan, plans: dict[str, RouterPlan]) -> list[Any]:
    """The actions in run order: each router followed by its paths' nodes, path after path, then its join."""
    order: list[Any] = []
    placed: set[str] = set()
    for node in flow.actions:
        if node.id in placed:
            continue
        order.append(node)
        placed.add(node.id)
        shape = plans.get(node.id)
        if shape is None:
            continue
        for path in shape.paths:
            order.extend(path.nodes)
            placed.update(n.id for n in path.nodes)
        if shape.join is not None:
            order.append(shape.join)
            placed.add(shape.join.id)
    return order
