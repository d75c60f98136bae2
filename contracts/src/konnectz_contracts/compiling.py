"""What every node compiler shares: the error type, the node's configuration values, validation.

Pure (no I/O): a kind's ``compile_node`` / ``compile_trigger`` in its contract module
(:mod:`konnectz_contracts.steps`, :mod:`konnectz_contracts.triggers`) uses these helpers to turn a
canvas node (:mod:`konnectz_contracts.canvas`) into its Config.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "INTEGER_ONLY",
    "CompileError",
    "Loose",
    "Text",
    "TriggerInput",
    "config_values",
    "fail",
    "integer",
    "is_blank",
    "text",
    "validated",
]

INTEGER_ONLY = "Please Fill Integer Only"


class CompileError(ValueError):
    """A canvas that cannot become a flow spec; the message names the node to fix."""


def fail(node: Node, message: str) -> CompileError:
    return CompileError(f"{node.label}: {message}")


M = TypeVar("M", bound=BaseModel)


def _none_to_empty(value: Any) -> Any:
    return "" if value is None else value


#: Text of the editor document: ``null`` is empty.
Text = Annotated[str, BeforeValidator(_none_to_empty), Field(max_length=100_000)]


class Loose(BaseModel):
    """A part of the editor document: the SPA may keep extra keys, which are kept."""

    model_config = ConfigDict(extra="allow")


def is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == [] or value == {}


def _plain(value: Any) -> Any:
    """A select's ``{"label": ..., "value": ...}`` is its value."""
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def config_values(node: Node) -> dict[str, Any]:
    """The node's configuration: ``configResponses`` (config_key → value), then ``selectedAddonsValue``."""
    values: dict[str, Any] = {}
    for entry in node.data.configResponses or ():
        key = entry.config_key.strip()
        if key and _plain(entry.value) not in (None, ""):
            values[key] = _plain(entry.value)
    for key, value in (node.data.selectedAddonsValue or {}).items():
        if _plain(value) not in (None, ""):
            values[str(key)] = _plain(value)
    return values


def text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise TypeError("must be text")


def integer(node: Node, value: Any, *, what: str, invalid: str = INTEGER_ONLY) -> int:
    """A whole number typed in a form ('12', 12, 12.0); 'Please Fill Integer Only' otherwise."""
    if isinstance(value, bool):
        raise fail(node, invalid)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    raise fail(node, f"{what}: {invalid}" if invalid == INTEGER_ONLY else invalid)


def _message(error: Any) -> str:
    loc = ".".join(str(p) for p in error.get("loc", ()))
    msg = str(error.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def validated(model: type[M], node: Node, /, **fields: Any) -> M:
    """``model`` built from ``fields`` (which may hold a field named ``model``: the first two parameters are
    positional only); a validation error becomes a CompileError naming the node."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise fail(node, _message(exc.errors()[0])) from exc


@dataclass(frozen=True)
class TriggerInput:
    """What a trigger compiler may use besides its node."""

    webhook_token: str
    timezone: str = "UTC"
