"""Formatter node (provider ``formatter``) → the runner's ``formatter`` step.

The configuration fields (``configResponses`` / ``selectedAddonsValue``) are the runner's option
names: ``operation`` (``text.upper`` … or the catalogue's short names ``uppercase``,
``date_format`` …), ``input`` and the options the operation needs (``find``, ``to_format`` …).
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import config_values, fail, validated
from konnectz_contracts.steps import formatter

PROVIDERS = ("formatter",)
# The catalogue's short operation names.
ALIASES = {
    "uppercase": "text.upper",
    "lowercase": "text.lower",
    "titlecase": "text.title",
    "capitalize": "text.capitalize",
    "trim": "text.trim",
    "replace": "text.replace",
    "split": "text.split",
    "truncate": "text.truncate",
    "url_encode": "text.url_encode",
    "url_decode": "text.url_decode",
    "number_format": "number.format",
    "currency": "number.currency",
    "round": "number.round",
    "date_format": "date.format",
    "date_add": "date.add",
    "date_subtract": "date.subtract",
    "convert_timezone": "date.convert_timezone",
}
_OPTIONS = set(formatter.Config.model_fields) - {"id", "name", "kind", "operation"}


def compile_node(node: Any) -> formatter.Config:
    values = config_values(node)
    operation = values.get("operation")
    if not isinstance(operation, str) or not operation.strip():
        raise fail(node, "choose an operation")
    operation = ALIASES.get(operation.strip(), operation.strip())
    if operation not in formatter.OPERATIONS:
        raise fail(node, f"unknown operation {operation[:50]!r}")
    options = {k: v for k, v in values.items() if k in _OPTIONS}
    return validated(
        formatter.Config, node, id=node.id, name=node.detail.name or "Formatter", operation=operation, **options
    )
