"""JSON encoding with orjson that never fails on a large integer.

A webhook body, an app's reply or a canvas typed in the editor may hold a number such as
``123456789012345678901234``. PostgreSQL's JSONB stores it, JavaScript reads it as a float, but
orjson refuses to encode an integer beyond 64 bits (``TypeError: Integer exceeds 64-bit range``):
storing a task log or a draft with one failed with a 500, and a task event with one could not be
stored at all. :func:`dumps` encodes such integers as the float JavaScript and the read pool (which
parses JSONB with orjson) see anyway; an integer too large even for a float (over about 1.8e308)
becomes its decimal string. Everything else is orjson's own encoding.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["dumps", "dumps_text"]

_INT_MIN = -(2**63)
_UINT_MAX = 2**64 - 1


def _fit_int(value: int) -> float | str:
    try:
        return float(value)
    except OverflowError:
        return str(value)


def _fit(value: Any) -> Any:
    """``value`` with every integer orjson cannot encode replaced (dict keys included)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if _INT_MIN <= value <= _UINT_MAX else _fit_int(value)
    if isinstance(value, dict):
        return {(_fit(k) if isinstance(k, int) and not isinstance(k, bool) else k): _fit(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fit(v) for v in value]
    return value


def dumps(value: Any, option: int = 0) -> bytes:
    """orjson's encoding of ``value``; integers beyond 64 bits as floats (see the module)."""
    try:
        return orjson.dumps(value, option=option)
    except TypeError as exc:  # orjson.JSONEncodeError is TypeError
        if "64-bit" not in str(exc):  # "Integer exceeds 64-bit range", "Dict integer key must be within 64-bit range"
            raise
        return orjson.dumps(_fit(value), option=option)


def dumps_text(value: Any) -> str:
    """The JSON text stored in a JSONB column (non-string keys allowed, as orjson writes them)."""
    return dumps(value, orjson.OPT_NON_STR_KEYS).decode()
