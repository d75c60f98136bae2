"""Data forwarder (in-house add-on): gather values from earlier steps into one object.

``keys`` is a list of key/value rows; each value may carry references (a value that is exactly
one reference keeps its JSON type), dotted keys build nested objects (``customer.name``). The
output is that object, so later steps reference ``{{node-4.customer.name}}``.

From the canvas (``compile_node``, providers in ``PROVIDERS``):
Api node (provider ``data_forwarder``) → the runner's ``data_forwarder`` step.

``keyList`` is the list of keys: ``{"key": "email", "value": "{{node-1.customer.email}}"}`` rows,
or a bare reference ``"{{node-1.customer.email}}"`` (its key is the last part of the path).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from konnectz_contracts.compiling import fail, validated
from konnectz_contracts.model import KeyValue, StepBase
from konnectz_contracts.refs import REFERENCE
from konnectz_contracts.steps.api_call import key_values

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "PROVIDERS", "Config", "compile_node"]

KIND = "data_forwarder"
ORDER = 7  # its place in the Step union (the CRD's oneOf order)


class Config(StepBase):
    kind: Literal["data_forwarder"] = "data_forwarder"
    keys: list[KeyValue] = Field(min_length=1, max_length=200)


PROVIDERS = ("data_forwarder",)


def compile_node(node: Node) -> Config:
    rows: list[KeyValue] = []
    for entry in node.data.keyList or ():
        if isinstance(entry, str):
            match = REFERENCE.fullmatch(entry.strip())
            if match is None:
                raise fail(node, f"the key {entry[:50]!r} must be a reference such as {{{{node-1.email}}}}")
            rows.append(KeyValue(key=match.group(1).rsplit(".", 1)[-1], value=entry.strip()))
        else:
            rows.extend(key_values(node, [entry], "key"))
    if not rows:
        raise fail(node, "add at least one key to forward")
    return validated(Config, node, id=node.id, name=node.detail.name or "Data Forwarder", keys=rows)
