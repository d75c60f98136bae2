"""Generator node (provider ``generator``) → the runner's ``generator`` step.

``what`` (or the catalogue's ``type``: ``number``, ``uuid``, ``password``, ``date``) picks the value;
the other fields are the runner's option names (``min``, ``max``, ``length``, ``count`` …).
"""

from __future__ import annotations

from typing import Any

from konnectz_api.compilers._common import config_values, fail, validated
from konnectz_contracts.steps import generator

PROVIDERS = ("generator",)
ALIASES = {"number": "random_number", "uuid": "uuid4", "password": "random_string", "string": "random_string"}
_OPTIONS = set(generator.Config.model_fields) - {"id", "name", "kind", "what"}


def compile_node(node: Any) -> generator.Config:
    values = config_values(node)
    what = values.get("what", values.get("type"))
    if not isinstance(what, str) or not what.strip():
        raise fail(node, "choose what to generate")
    what = ALIASES.get(what.strip(), what.strip())
    options = {k: v for k, v in values.items() if k in _OPTIONS}
    return validated(generator.Config, node, id=node.id, name=node.detail.name or "Generator", what=what, **options)
