"""Splitter (in-house add-on): split a text into segments and keep one of them, or all.

``input`` (may carry references) is split at ``separator`` (``\\n``, ``\\t`` mean newline and tab);
a value that already is a list is taken as its segments. Each segment is trimmed. ``segment``:

- ``First`` (default), ``Second``, ``Last``, ``Second to Last``: ``{"output": "<segment>"}``; when
  the text has too few segments the output is ``""`` and the task log says so (not an error);
- ``All``: ``{"output": [<segments>], "count": n}``.

From the canvas (``compile_node``, providers in ``PROVIDERS``):
InHouse node (provider ``splitter``) → the runner's ``splitter`` step.

``input`` and ``separator`` are configuration fields; the segment is ``inHouseAppConfig.segmentIndex``
(an index 0 to 4 or a label) or the ``segment`` field: First (default), Second, Last, Second to Last, All.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, is_blank, text, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "PROVIDERS", "SEGMENTS", "Config", "Segment", "compile_node"]

KIND = "splitter"
ORDER = 3  # its place in the Step union (the CRD's oneOf order)

Segment = Literal["First", "Second", "Last", "Second to Last", "All"]
SEGMENTS: tuple[str, ...] = ("First", "Second", "Last", "Second to Last", "All")


class Config(StepBase):
    kind: Literal["splitter"] = "splitter"
    input: str = Field(default="", description="The text to split; may carry references")
    separator: str = Field(default=",", min_length=1, max_length=100)
    segment: Segment = "First"


PROVIDERS = ("splitter",)


def _segment(node: Node, value: Any) -> str:
    if is_blank(value):
        return "First"
    if isinstance(value, dict):
        value = value.get("value", value.get("label"))
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(SEGMENTS):
        return SEGMENTS[value]
    if isinstance(value, str):
        if value.strip().isdigit() and int(value.strip()) < len(SEGMENTS):
            return SEGMENTS[int(value.strip())]
        for segment in SEGMENTS:
            if value.strip().casefold() == segment.casefold():
                return segment
    raise fail(node, f"Segment must be one of {', '.join(SEGMENTS)}")


def compile_node(node: Node) -> Config:
    values = config_values(node)
    in_house = node.data.inHouseAppConfig
    chosen = in_house.segmentIndex if in_house is not None and not is_blank(in_house.segmentIndex) else None
    segment = _segment(node, chosen if chosen is not None else values.get("segment"))
    try:
        source = text(values.get("input")).strip()
        separator = text(values.get("separator")) or ","
    except TypeError as exc:
        raise fail(node, "Input and Separator must be text") from exc
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Splitter",
        input=source,
        separator=separator,
        segment=segment,
    )
