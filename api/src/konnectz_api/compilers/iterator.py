"""InHouse node (provider ``iterator``) → the runner's ``iterator`` step.

``list`` (the catalogue's field; ``input`` also works) names the list, usually one reference such as
``{{node-1.line_items}}``; ``separator`` splits text. A flow has at most one iterator: the flow
compiler refuses a second one with 'The iterator can only be used once.'
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import config_values, fail, text, validated
from konnectz_contracts.steps import iterator

PROVIDERS = ("iterator",)
ONLY_ONCE = iterator.ONLY_ONCE


def compile_node(node: Any) -> iterator.Config:
    values = config_values(node)
    source = values.get("list", values.get("input"))
    try:
        source_text = text(source).strip()
    except TypeError as exc:
        raise fail(node, "List must be text or a reference") from exc
    if not source_text:
        raise fail(node, "choose the list to iterate over")
    options = {"separator": text(values["separator"])} if isinstance(values.get("separator"), str) else {}
    return validated(
        iterator.Config, node, id=node.id, name=node.detail.name or "Iterator", input=source_text, **options
    )
