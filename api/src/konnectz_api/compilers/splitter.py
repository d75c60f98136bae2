"""InHouse node (provider ``splitter``) → the runner's ``splitter`` step.

``input`` and ``separator`` are configuration fields; the segment is ``inHouseAppConfig.segmentIndex``
(an index 0 to 4 or a label) or the ``segment`` field: First (default), Second, Last, Second to Last, All.
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import config_values, fail, is_blank, text, validated
from konnectz_contracts.steps import splitter

PROVIDERS = ("splitter",)


def _segment(node: Any, value: Any) -> str:
    if is_blank(value):
        return "First"
    if isinstance(value, dict):
        value = value.get("value", value.get("label"))
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(splitter.SEGMENTS):
        return splitter.SEGMENTS[value]
    if isinstance(value, str):
        if value.strip().isdigit() and int(value.strip()) < len(splitter.SEGMENTS):
            return splitter.SEGMENTS[int(value.strip())]
        for segment in splitter.SEGMENTS:
            if value.strip().casefold() == segment.casefold():
                return segment
    raise fail(node, f"Segment must be one of {', '.join(splitter.SEGMENTS)}")


def compile_node(node: Any) -> splitter.Config:
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
        splitter.Config,
        node,
        id=node.id,
        name=node.detail.name or "Splitter",
        input=source,
        separator=separator,
        segment=segment,
    )
