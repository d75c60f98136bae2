"""Iterator (in-house add-on): run the following steps once per item of a list.

``input`` usually is one reference to a list (``{{node-1.line_items}}``). Text is read as a JSON
array when it is one, else split at ``separator`` (default ``,``). Each item is what later steps
see under the iterator's node id: an object as is (``{{node-3.sku}}``), anything else as
``{"value": item}`` (``{{node-3.value}}``).

The step's own output (in the task log) is ``{"count": n, "items": [...]}``; the engine then runs
the following steps once per item (:attr:`Outcome.items`), each step's log record carrying its
``item_index`` (0-based). No items: the following steps do not run and the run is SUCCESS.
A flow has at most one iterator ('The iterator can only be used once.').
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from konnectz_contracts.model import StepBase

__all__ = ["KIND", "MAX_ITEMS", "ONLY_ONCE", "Config"]

KIND = "iterator"
MAX_ITEMS = 500
ONLY_ONCE = "The iterator can only be used once."


class Config(StepBase):
    kind: Literal["iterator"] = "iterator"
    input: str = Field(min_length=1, description="The list to iterate over; usually one reference")
    separator: str = Field(default=",", min_length=1, max_length=100)
