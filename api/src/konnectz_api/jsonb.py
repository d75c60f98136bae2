"""PostgreSQL's JSONB cannot hold the NUL character (``\\u0000``) in a string or key: a value
that carries one (a webhook body, an API reply, a typed canvas) would fail the insert. Before
storing JSON from outside, NUL characters become U+FFFD (the replacement character)."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["jsonb_safe"]

NUL = "\x00"
REPLACEMENT = "\ufffd"


def jsonb_safe(value: Any) -> Any:
    """``value`` with every NUL in its strings and keys replaced; other values unchanged.

    Nearly every value has none: orjson's encoding (which writes a NUL as ``\\u0000``) tells at C
    speed, and only a value that may have one is walked."""
    if isinstance(value, dict | list):
        try:
            if b"\\u0000" not in orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS):
                return value
        except (TypeError, orjson.JSONEncodeError):
            pass  # something orjson does not encode: walk it
    return _walk(value)


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(NUL, REPLACEMENT) if NUL in value else value
    if isinstance(value, dict):
        return {_walk(k) if isinstance(k, str) else k: _walk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v) for v in value]
    return value
