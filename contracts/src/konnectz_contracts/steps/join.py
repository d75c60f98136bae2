"""Join (in-house add-on): where the paths of a :mod:`router <konnectz_contracts.steps.router>` meet.

- ``wait: "all"``: the flow goes on only if every chosen path reached the join; a path stopped by
  a filter stops the run at the join (SUCCESS, with the reason).
- ``wait: "any"``: the flow goes on if at least one chosen path reached it.

Output: the paths' results under their names, ``{"<path name>": <output of the path's last step,
{} for an empty path, null for a path that was skipped or stopped>, ...}``, so a later step uses
``{{<join id>.<path name>.<field>}}`` (path names may hold spaces: ``{{join-1.Big order.total}}``).
The outputs of every step on every path also stay available by step id.

From the canvas: a node of type ``join`` with ``data.joinWait`` ("all", the default, or "any"); its
router comes from the links (the api's compiler passes it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import Loose, fail, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "PROVIDERS", "Config", "JoinNodeData", "compile_node", "is_join"]

KIND = "join"
PROVIDERS = ("join",)


class Config(StepBase):
    kind: Literal["join"] = "join"
    router: str = Field(min_length=1, description="The step id of its router (earlier in the flow)")
    wait: Literal["all", "any"] = "all"


class JoinNodeData(Loose):
    """The join node's own fields of ``data``."""

    joinWait: Any = None


def is_join(node: Node) -> bool:
    """A join node: of type ``join`` (or, from another editor version, of provider ``join``)."""
    return getattr(node, "type", "") == KIND or node.provider == KIND


def compile_node(node: Node, router: str = "") -> Config:
    """The join step of ``node``; ``router``: its router's step id (from the links)."""
    wait = getattr(node.data, "joinWait", None)
    if isinstance(wait, dict):
        wait = wait.get("value")
    wait = wait or "all"
    if wait not in ("all", "any"):
        raise fail(node, "wait must be all or any")
    if not router:
        raise fail(node, "a join closes the paths of a router: link the end of each path of a router to it")
    return validated(Config, node, id=node.id, name=node.detail.name or "Join", router=router, wait=wait)
