"""Api node (provider ``data_forwarder``) → the runner's ``data_forwarder`` step.

``keyList`` is the list of keys: ``{"key": "email", "value": "{{node-1.customer.email}}"}`` rows,
or a bare reference ``"{{node-1.customer.email}}"`` (its key is the last part of the path).
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import fail, validated
from konnectz_api.compilers.api_call import key_values
from konnectz_contracts.model import KeyValue
from konnectz_contracts.refs import REFERENCE
from konnectz_contracts.steps import data_forwarder

PROVIDERS = ("data_forwarder",)


def compile_node(node: Any) -> data_forwarder.Config:
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
    return validated(data_forwarder.Config, node, id=node.id, name=node.detail.name or "Data Forwarder", keys=rows)
