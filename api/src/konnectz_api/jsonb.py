"""PostgreSQL's JSONB cannot hold the NUL character (``\\u0000``) in a string or key: a value
that carries one (a webhook body, an API reply, a typed canvas) would fail the insert. Before
storing JSON from outside, NUL characters become U+FFFD (the replacement character)."""

from __future__ import annotations

from typing import Any

__all__ = ["jsonb_safe"]

NUL = "\x00"
REPLACEMENT = "\ufffd"


def jsonb_safe(value: Any) -> Any:
    """``value`` with every NUL in its strings and keys replaced; other values unchanged."""
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT) if NUL in value else value
    if isinstance(value, dict):
        return {jsonb_safe(k) if isinstance(k, str) else k: jsonb_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonb_safe(v) for v in value]
    return value
