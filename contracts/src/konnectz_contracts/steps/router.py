"""Router (in-house add-on): named paths, each guarded by filter conditions or "otherwise".

A router splits the flow into up to :data:`MAX_PATHS` named paths. Each path has conditions (the
filter step's :class:`~konnectz_contracts.steps.filter.Condition`: the same twelve operators and
AND/OR) or is the ``otherwise`` path, which runs when no other path's conditions pass (at most one).

- ``mode: "parallel"``: every path whose conditions pass runs; the chosen paths run concurrently.
- ``mode: "first_match"``: only the first such path, in the router's order.

A path's ``steps`` are the ids of the steps on it, in run order; in the flow spec they follow the
router, path after path, then come the path's :mod:`join <konnectz_contracts.steps.join>` (if any)
and the rest of the flow. A router without a join ends the run with its paths. Limits: one level of
paths (no router, delay or iterator inside a path), :data:`MAX_PATHS` paths of up to 50 conditions.

Output: ``{"paths": [<chosen path names>], "mode": <mode>}``. When no path is chosen the run stops
at the router (SUCCESS, with the reason), like a filter that did not pass.

From the canvas (``compile_node``, providers in ``PROVIDERS``): a node of type ``router`` with
``data.routerMode`` and ``data.routerPaths`` (:class:`CanvasPath`: ``id``, ``name``, ``otherwise``,
``conditions`` shaped like the filter's ``filterValues``). Which node starts each path comes from
the links (``sourceHandle`` = the path's id): the api's compiler fills ``steps``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, model_validator

from konnectz_contracts.compiling import Loose, Text, fail, validated
from konnectz_contracts.model import StepBase, Strict
from konnectz_contracts.steps.filter import Condition, FilterCondition, compile_conditions

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "KIND",
    "MAX_PATHS",
    "NAME_PATTERN",
    "PROVIDERS",
    "CanvasPath",
    "Config",
    "RouterNodeData",
    "RouterPath",
    "canvas_paths",
    "compile_node",
    "is_router",
    "path_label",
]

KIND = "router"
PROVIDERS = ("router",)
MAX_PATHS = 10
#: A path name: 1..40 letters, digits, spaces, ``-`` or ``_``, not starting or ending with a space
#: (it is a key of the join's output, used in references such as ``{{join-1.Paid.total}}``).
NAME_PATTERN = r"^[A-Za-z0-9_-](?:[A-Za-z0-9 _-]{0,38}[A-Za-z0-9_-])?$"


def path_label(router_id: str, name: str) -> str:
    """What a path step's ``StepResult.path`` holds: ``"<router step id>/<path name>"``."""
    return f"{router_id}/{name}"


class RouterPath(Strict):
    name: str = Field(min_length=1, max_length=40, pattern=NAME_PATTERN, description="Unique in its router")
    conditions: list[Condition] = Field(default_factory=list, max_length=50)
    otherwise: bool = Field(default=False, description="Runs when no other path's conditions pass")
    steps: list[str] = Field(default_factory=list, max_length=500, description="Ids of the path's steps, in run order")

    @model_validator(mode="after")
    def _guarded(self) -> RouterPath:
        if self.otherwise and self.conditions:
            raise ValueError(f"path {self.name}: the otherwise path has no conditions")
        if not self.otherwise and not self.conditions:
            raise ValueError(f"path {self.name}: add at least one condition (or make it the otherwise path)")
        return self


class Config(StepBase):
    kind: Literal["router"] = "router"
    mode: Literal["parallel", "first_match"] = "parallel"
    paths: list[RouterPath] = Field(min_length=1, max_length=MAX_PATHS)

    @model_validator(mode="after")
    def _paths(self) -> Config:
        names = [p.name for p in self.paths]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise ValueError(f"two paths are named {twice!r}: path names must be unique in a router")
        if sum(p.otherwise for p in self.paths) > 1:
            raise ValueError("a router has at most one otherwise path")
        seen: set[str] = set()
        for path in self.paths:
            for step_id in path.steps:
                if step_id in seen or step_id == self.id:
                    raise ValueError(f"step {step_id!r} is on two paths: a step belongs to one path")
                seen.add(step_id)
        return self


# --- the canvas ----------------------------------------------------------------------------------
class CanvasPath(Loose):
    """One path of a router node, as the editor keeps it (``data.routerPaths`` entries)."""

    id: Text = ""
    name: Text = ""
    otherwise: bool = False
    conditions: list[FilterCondition] | None = Field(default=None, max_length=50)


class RouterNodeData(Loose):
    """The router node's own fields of ``data`` (the canvas's router node data adds them)."""

    routerMode: Any = None
    routerPaths: list[CanvasPath] | None = Field(default=None, max_length=50)


def is_router(node: Node) -> bool:
    """A router node: of type ``router`` (or, from another editor version, of provider ``router``)."""
    return getattr(node, "type", "") == KIND or node.provider == KIND


def canvas_paths(node: Node) -> list[CanvasPath]:
    """The node's ``data.routerPaths``, typed (:class:`CompileError` naming the node when malformed)."""
    raw = getattr(node.data, "routerPaths", None) or []
    if not isinstance(raw, list) or len(raw) > 50:
        raise fail(node, "routerPaths must be a list of at most 50 paths")
    try:
        return [p if isinstance(p, CanvasPath) else CanvasPath.model_validate(p) for p in raw]
    except ValidationError as exc:
        raise fail(node, f"a path is malformed: {exc.errors()[0].get('msg')}") from exc


def compile_node(node: Node, steps: dict[str, list[str]] | None = None) -> Config:
    """The router step of ``node``; ``steps``: path id -> the ids of its steps (from the links)."""
    mode = getattr(node.data, "routerMode", None)
    if isinstance(mode, dict):
        mode = mode.get("value")
    mode = mode or "parallel"
    if mode not in ("parallel", "first_match"):
        raise fail(node, "the mode must be parallel or first_match")
    raw = canvas_paths(node)
    if not raw:
        raise fail(node, "add at least one path")
    if len(raw) > MAX_PATHS:
        raise fail(node, f"a router has at most {MAX_PATHS} paths")
    paths: list[dict[str, Any]] = []
    for number, path in enumerate(raw, start=1):
        name = path.name.strip()
        if not name:
            raise fail(node, f"path {number}: give the path a name")
        if re.fullmatch(NAME_PATTERN, name) is None:
            raise fail(
                node, f"path {number}: a path name has 1 to 40 letters, digits, spaces, - or _ (not {name[:50]!r})"
            )
        where = f"path {name}: "
        conditions = [] if path.otherwise else compile_conditions(node, path.conditions, where=where)
        if not path.otherwise and not conditions:
            raise fail(node, f"{where}add at least one condition (or make it the otherwise path)")
        ids = (steps or {}).get(path.id.strip() or name, [])
        paths.append({"name": name, "conditions": conditions, "otherwise": path.otherwise, "steps": ids})
    return validated(Config, node, id=node.id, name=node.detail.name or "Router", mode=mode, paths=paths)
