"""JSON Parse (in-house add-on): a text that holds JSON becomes data later steps can map.

Webhooks and apps often carry JSON inside a string (a form field, a message's body, an API's
``payload`` attribute). Later steps cannot reach into a string; after this step they can:
``{{node-N.data.customer.email}}``.

From the canvas: the fields ``text`` (references allowed, e.g. ``{{node-1.payload}}``) and
``on_invalid`` (``error`` — the default: the run ends as ERROR, saying where the JSON breaks — or
``empty``: the run goes on with ``data`` null and ``valid`` false, so a Filter or Router can branch).
Output: ``{"data": <the parsed value>, "type": "object" | "array" | "string" | "number" | "boolean" |
"null", "valid": true}`` (``{"data": null, "type": null, "valid": false, "error": "..."}`` for
invalid JSON with ``on_invalid`` ``empty``). Bounds: the text at most 1 MiB, the JSON at most
:data:`~konnectz_contracts.limits.MAX_JSON_DEPTH` levels deep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from konnectz_contracts.compiling import config_values, fail, is_blank, validated
from konnectz_contracts.model import StepBase

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "MAX_TEXT_BYTES", "ON_INVALID", "PROVIDERS", "Config", "compile_node"]

KIND = "json_parse"
PROVIDERS = ("json_parse",)  # the catalogue app (catalogue/apps/json_parse.yaml) whose nodes compile to this kind
ON_INVALID = ("error", "empty")
#: The longest text parsed (after its references are resolved).
MAX_TEXT_BYTES = 1024 * 1024


class Config(StepBase):
    kind: Literal["json_parse"] = "json_parse"
    text: str = Field(max_length=100_000)
    on_invalid: Literal["error", "empty"] = "error"


def compile_node(node: Node) -> Config:
    values = config_values(node)
    if is_blank(values.get("text")):
        raise fail(node, "enter the text that holds the JSON (for example a reference to a field)")
    on_invalid = values.get("on_invalid") or "error"
    if on_invalid not in ON_INVALID:
        raise fail(node, f"when the JSON is invalid must be one of {', '.join(ON_INVALID)}")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "JSON Parse",
        text=str(values["text"]),
        on_invalid=on_invalid,
    )
