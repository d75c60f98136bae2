"""References between steps: ``{{<node_id>.<dotted.path>}}``, resolved by plain lookup.

This is string templating only: a reference names a node's output and a path into it
(dict keys, or list indexes written as numbers: ``{{node-1.items.0.name}}``). Nothing is
evaluated, so user input can never run code here. A path that does not exist resolves to
``""`` and adds a warning to the list the caller passes in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from konnectz_contracts.errors import StepError
from konnectz_contracts.model import KeyValue

__all__ = ["REFERENCE", "build_json_body", "lookup", "resolve", "resolve_value"]

# ``{{ node-1.a.b }}``: node id and dotted path, whitespace allowed inside the braces.
REFERENCE = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")

_MISSING = object()


def lookup(reference: str, context: dict[str, Any]) -> Any:
    """The value named by ``node_id.path`` in ``context``, or raise ``KeyError`` if there is none."""
    node_id, _, path = reference.partition(".")
    if node_id not in context:
        raise KeyError(reference)
    value = context[node_id]
    for part in path.split(".") if path else ():
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(reference)
    return value


def _lookup_or_warn(reference: str, context: dict[str, Any], warnings: list[str] | None) -> Any:
    try:
        return lookup(reference, context)
    except KeyError:
        if warnings is not None:
            warnings.append(f"Reference {{{{{reference}}}}} not found: used an empty value")
        return _MISSING


def _to_text(value: Any) -> str:
    if value is _MISSING or value is None:
        return ""
    if isinstance(value, str):
        return value
    # Numbers, booleans, objects and lists read as JSON (true, 1.5, {"a": 1}).
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def resolve(template: str, context: dict[str, Any], warnings: list[str] | None = None) -> str:
    """Replace every reference in ``template`` by the text of its value."""
    return REFERENCE.sub(lambda m: _to_text(_lookup_or_warn(m.group(1), context, warnings)), template)


def resolve_value(template: str, context: dict[str, Any], warnings: list[str] | None = None) -> Any:
    """Like :func:`resolve`, but a template that is exactly one reference keeps the value's JSON type."""
    match = REFERENCE.fullmatch(template.strip())
    if match is None:
        return resolve(template, context, warnings)
    value = _lookup_or_warn(match.group(1), context, warnings)
    return "" if value is _MISSING else value


def build_json_body(
    pairs: Iterable[KeyValue],
    context: dict[str, Any],
    *,
    wrap_in_array: bool = False,
    warnings: list[str] | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """Build a JSON body from key/value rows. Dotted keys (``customer.name``) build nested objects."""
    body: dict[str, Any] = {}
    for pair in pairs:
        parts = pair.key.split(".")
        if any(not part for part in parts):
            raise StepError(f"Body key {pair.key!r} has an empty part")
        node = body
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join(parts[: depth + 1])
                raise StepError(f"Body key {pair.key!r} conflicts with the value already set for {where!r}")
            node = child
        leaf = parts[-1]
        if isinstance(node.get(leaf), dict):
            raise StepError(f"Body key {pair.key!r} conflicts with nested keys under it")
        node[leaf] = resolve_value(pair.value, context, warnings)
    return [body] if wrap_in_array else body
