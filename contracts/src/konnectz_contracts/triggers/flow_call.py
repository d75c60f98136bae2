"""Called by a flow or an AI tool: a run starts when something calls the flow with its inputs.

A published flow with this trigger has no URL of its own. It is started by

- an MCP client (an AI assistant, an agent) through the api's MCP server ``/mcp``, when the flow
  offers itself as a tool (``mcp``): the tool's name is :func:`tool_name`, its description
  ``description``, its input schema :func:`input_schema` (from ``inputs``); see docs/mcp.md;
- another flow's *Call a flow* step (issue 37; not built yet).

The call's arguments are checked against ``inputs`` with the form trigger's rules
(:func:`~konnectz_contracts.triggers.form.check_values`: required fields, types, select options,
lengths) before a run starts; the checked values are the trigger's output, so later steps refer to
them as ``{{node-1.<key>}}``. Keys the inputs do not define are ignored.

From the canvas (provider ``flow_call``): the node's ``selectedAddonsValue`` holds ``inputs`` (a list
of ``{key, label, type, required, options, placeholder}``, as a form's fields), ``description``
(what the flow does, for a person or a model choosing it) and ``mcp`` (offered as an MCP tool).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import TriggerInput, fail, validated
from konnectz_contracts.model import Strict
from konnectz_contracts.triggers.form import FormField, check_values

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_INPUTS",
    "PROVIDERS",
    "FlowCallTrigger",
    "check_arguments",
    "compile_trigger",
    "input_schema",
    "konnect_of_tool",
    "sample_output",
    "tool_name",
]

ORDER = 6
PROVIDERS = ("flow_call",)
MAX_INPUTS = 50
MAX_DESCRIPTION = 1000
#: A tool name as MCP clients accept it (letters, digits, ``_`` and ``-``, at most 64).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SLUG_CHARS = re.compile(r"[^a-z0-9]+")


class FlowCallTrigger(Strict):
    """A run starts when the flow is called (an MCP tool call, or another flow) with ``inputs``."""

    kind: Literal["flow_call"] = "flow_call"
    inputs: list[FormField] = Field(default_factory=list, max_length=MAX_INPUTS)
    description: str = Field(default="", max_length=MAX_DESCRIPTION, description="What the flow does, for its callers")
    mcp: bool = Field(default=False, description="Offered as a tool by the MCP server (/mcp)")

    @model_validator(mode="after")
    def _unique_keys(self) -> FlowCallTrigger:
        keys = [f.key for f in self.inputs]
        if len(set(keys)) != len(keys):
            raise ValueError("input keys must be unique")
        return self


MODEL = FlowCallTrigger


def compile_trigger(node: Node, given: TriggerInput) -> FlowCallTrigger:
    """The node's ``selectedAddonsValue`` (``inputs``, ``description``, ``mcp``) into the trigger."""
    del given  # no URL, no time zone
    values = getattr(node.data, "selectedAddonsValue", None) or {}
    if not isinstance(values, dict):
        raise fail(node, "Inputs: the trigger's settings are not an object")
    inputs = values.get("inputs") or []
    if not isinstance(inputs, list):
        raise fail(node, "Inputs: give a list of inputs")
    description = values.get("description") or ""
    if not isinstance(description, str):
        raise fail(node, "Description: give a text")
    mcp = values.get("mcp", False)
    if not isinstance(mcp, bool):
        raise fail(node, "Offer as an MCP tool: give true or false")
    if mcp and not description.strip():
        raise fail(node, "Description: a flow offered as an MCP tool needs a description (what it does, for the model)")
    return validated(FlowCallTrigger, node, inputs=inputs, description=description.strip(), mcp=mcp)


def check_arguments(trigger: FlowCallTrigger, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, errors): the trigger output of a call with ``arguments``, or a message per bad input."""
    return check_values(trigger.inputs, arguments)


def _property(field: FormField) -> dict[str, Any]:
    described = {"description": field.label} if field.label else {}
    if field.type == "checkbox":
        return {"type": "boolean", **described}
    if field.type == "number":
        return {"type": "number", **described}
    text: dict[str, Any] = {"type": "string", "maxLength": field.max_length, **described}
    if field.type == "email":
        text["format"] = "email"
    elif field.type == "date":
        text["format"] = "date"
    elif field.type == "select":
        text["enum"] = list(field.options)
    return text


def input_schema(trigger: FlowCallTrigger) -> dict[str, Any]:
    """The JSON Schema of a call's arguments (an MCP tool's ``inputSchema``)."""
    return {
        "type": "object",
        "properties": {f.key: _property(f) for f in trigger.inputs},
        "required": [f.key for f in trigger.inputs if f.required],
        "additionalProperties": False,
    }


def tool_name(konnect_id: int, konnect_name: str) -> str:
    """The MCP tool name of flow ``konnect_id``: its name as a slug, then its id (``orders_to_crm_12``)."""
    suffix = f"_{int(konnect_id)}"
    slug = _SLUG_CHARS.sub("_", (konnect_name or "").lower()).strip("_") or "flow"
    name = slug[: 64 - len(suffix)].rstrip("_") + suffix
    assert _TOOL_NAME.match(name)
    return name


def konnect_of_tool(name: str) -> int | None:
    """The flow id a tool name ends with (None: not a tool name of :func:`tool_name`'s shape)."""
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        return None
    _, _, digits = name.rpartition("_")
    return int(digits) if digits.isdigit() and 0 < len(digits) <= 18 else None


def sample_output(trigger: FlowCallTrigger) -> dict[str, Any]:
    """What Test & Review shows for the trigger: one sample value per input."""
    samples = {"checkbox": True, "number": 1, "date": "2026-01-31", "email": "ada@example.com"}
    return {
        f.key: (f.options[0] if f.type == "select" and f.options else samples.get(f.type, f.placeholder or f.label))
        for f in trigger.inputs
    }
