"""Call a Flow (in-house add-on): run another published flow of the same account, then wait for its
result or go on at once (docs/sub-flows.md).

The called flow starts with the *Called by a flow or AI tool* trigger
(:mod:`konnectz_contracts.triggers.flow_call`): the step maps each of that trigger's inputs to a value
(text with references, ``{{node-2.email}}``), checked against the inputs' rules when the step runs.

From the canvas: ``flow`` (the called flow's id, picked from the account's published flows with that
trigger), ``inputs`` (an object: input key -> value), ``mode`` and, when it waits, the fields of
:func:`~konnectz_contracts.waits.timeout_settings` (``timeout``, ``timeout_unit`` — minutes by default —
and ``on_timeout``).

- ``mode: wait`` (the default): the run waits, holding no worker slot, until the called run ends (its
  result decides the wait in ``KZ_WAITS``, once) or the timeout. Output: ``{"result", "run_id",
  "flow_id", "flow_name", "status"}``: ``result`` is the called flow's Respond body (JSON parsed when it
  is JSON) when a Respond step ran, else its last step's output. A called run that fails makes this step
  fail with its error (the step's On error policy applies: *continue* goes on with the error as output).
- ``mode: go_on``: the called run is started and the run goes on at once. Output: ``{"run_id",
  "flow_id", "flow_name"}``.

Publishing checks (:mod:`konnectz_api.services.flow_calls`): the called flow is published, starts
with the flow-call trigger, is the account's own; no cycle among the account's flows; a chain at most
:data:`~konnectz_contracts.limits.MAX_CALL_DEPTH` calls deep.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from konnectz_contracts.compiling import config_values, fail, integer, is_blank, validated
from konnectz_contracts.model import StepBase
from konnectz_contracts.triggers.flow_call import MAX_INPUTS
from konnectz_contracts.waits import MAX_WAIT, timeout_settings

if TYPE_CHECKING:
    from konnectz_contracts.canvas import Node

__all__ = ["KIND", "MODES", "PROVIDERS", "Config", "called_flows", "compile_node"]

KIND = "call_flow"
PROVIDERS = ("call_flow",)  # the catalogue app (catalogue/apps/call_flow.yaml)
MODES = ("wait", "go_on")
#: A mapped input's value (text with references) at most this long.
MAX_INPUT_CHARS = 10_000


class Config(StepBase):
    kind: Literal["call_flow"] = "call_flow"
    flow_id: int = Field(ge=1, le=2**53, description="The called flow (a konnect id of the same account)")
    inputs: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_INPUTS,
        description="The called flow's trigger inputs: input key -> value (text with references)",
    )
    mode: Literal["wait", "go_on"] = "wait"
    timeout: int = Field(default=1, ge=1, le=31_622_400, description="How many units the run waits at most")
    timeout_unit: Literal["seconds", "minutes", "hours", "days"] = "hours"
    on_timeout: Literal["continue", "stop", "fail"] = "fail"

    @model_validator(mode="after")
    def _bounded(self) -> Config:
        if self.span() > MAX_WAIT:
            raise ValueError(f"a wait lasts at most {MAX_WAIT.days} days")
        for key, value in self.inputs.items():
            if not key or len(key) > 100:
                raise ValueError("an input key is 1 to 100 characters")
            if len(value) > MAX_INPUT_CHARS:
                raise ValueError(f"input {key}: at most {MAX_INPUT_CHARS} characters")
        return self

    def span(self) -> timedelta:
        return timedelta(**{self.timeout_unit: self.timeout})

    @property
    def waits(self) -> bool:
        return self.mode == "wait"


def _inputs(node: Node, raw: Any) -> dict[str, str]:
    if raw in (None, ""):
        return {}
    if isinstance(raw, list):  # [{key, value}] rows
        pairs: dict[str, Any] = {}
        for row in raw:
            if not isinstance(row, dict) or not isinstance(row.get("key"), str):
                raise fail(node, "Inputs: give each input as {key, value}")
            pairs[row["key"]] = row.get("value")
        raw = pairs
    if not isinstance(raw, dict):
        raise fail(node, "Inputs: give an object of input key -> value")
    found: dict[str, str] = {}
    for key, value in raw.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, int | float):
            value = str(value)
        if not isinstance(value, str):
            raise fail(node, f"Inputs: the value of {key} must be text (with references)")
        found[str(key)] = value
    return found


def compile_node(node: Node) -> Config:
    values = config_values(node)
    if is_blank(values.get("flow")):
        raise fail(node, "choose the flow to call (a published flow that starts with 'Called by a flow')")
    flow_id = integer(node, values["flow"], what="Flow", invalid="the flow to call must be a flow id")
    mode = values.get("mode") or "wait"
    if mode not in MODES:
        raise fail(node, "the mode must be 'wait' (wait for its result) or 'go_on' (go on at once)")
    # The timeout is kept whatever the mode (read when the step waits): switching modes loses nothing.
    if is_blank(values.get("timeout")):
        values["timeout"] = 1
    values.setdefault("on_timeout", "fail")
    timing = timeout_settings(node, values, default_unit="hours", waits_for="the called flow's result")
    return validated(
        Config,
        node,
        id=node.id,
        name=node.detail.name or "Call a flow",
        flow_id=flow_id,
        inputs=_inputs(node, values.get("inputs")),
        mode=mode,
        **timing,
    )


def called_flows(steps: list[Any]) -> list[int]:
    """The flow ids a flow's steps call (Call a Flow steps, and AI Agents' sub-flow tools), in order, once each."""
    found: list[int] = []
    for step in steps:
        kind = getattr(step, "kind", None)
        if kind == KIND:
            found.append(step.flow_id)
        elif kind == "agent":
            found += [t.konnect_id for t in step.tools if t.kind == "flow" and t.konnect_id is not None]
    return list(dict.fromkeys(found))
