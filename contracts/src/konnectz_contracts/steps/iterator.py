"""Iterator (in-house add-on): run the following steps once per item of a list.

``input`` usually is one reference to a list (``{{node-1.line_items}}``). Text is read as a JSON
array when it is one, else split at ``separator`` (default ``,``). Each item is what later steps
see under the iterator's node id: an object as is (``{{node-3.sku}}``), anything else as
``{"value": item}`` (``{{node-3.value}}``).

The step's own output (in the task log) is ``{"count": n, "items": [...]}``; the engine then runs
the following steps once per item (:attr:`Outcome.items`), each step's log record carrying its
``item_index`` (0-based). No items: the following steps do not run and the run is SUCCESS.
A flow has at most one iterator ('The iterator can only be used once.').

From the canvas (``compile_node``, providers in ``PROVIDERS``):
InHouse node (provider ``iterator``) → the runner's ``iterator`` step.

``list`` (the catalogue's field; ``input`` also works) names the list, usually one reference such as
``{{node-1.line_items}}``; ``separator`` splits text. A flow has at most one iterator: the flow
compiler refuses a second one with 'The iterator can only be used once.'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, text, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "MAX_ITEMS", "ONLY_ONCE", "PROVIDERS", "Config", "compile_node"]

KIND = "iterator"
ORDER = 4  # its place in the Step union (the CRD's oneOf order)
MAX_ITEMS = 500
ONLY_ONCE = "The iterator can only be used once."


class Config(StepBase):
    kind: Literal["iterator"] = "iterator"
    input: str = Field(min_length=1, description="The list to iterate over; usually one reference")
    separator: str = Field(default=",", min_length=1, max_length=100)


PROVIDERS = ("iterator",)


def compile_node(node: Node) -> Config:
    values = config_values(node)
    source = values.get("list", values.get("input"))
    try:
        source_text = text(source).strip()
    except TypeError as exc:
        raise fail(node, "List must be text or a reference") from exc
    if not source_text:
        raise fail(node, "choose the list to iterate over")
    options = {"separator": text(values["separator"])} if isinstance(values.get("separator"), str) else {}
    return validated(Config, node, id=node.id, name=node.detail.name or "Iterator", input=source_text, **options)
