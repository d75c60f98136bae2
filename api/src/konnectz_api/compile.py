"""Compile an editor document (canvas_json) into the runner's FlowSpec.

The editor document is not what runs: publishing parses it into typed nodes
(:mod:`konnectz_contracts.canvas`), orders them by the links from the trigger (not by ``app_index``;
:mod:`konnectz_api.flow_plan`), compiles each node with the compiler of its kind
(:mod:`konnectz_api.compilers`) and validates the result as a :class:`~konnectz_contracts.spec.FlowSpec`.
Every problem is a :class:`CompileError` whose message names the node to fix and uses the editor's
messages where it has one.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from konnectz_api.compilers import CompileError, TriggerInput, compile_step, compile_trigger
from konnectz_api.flow_plan import SAME_SOURCE_AND_TARGET, plan
from konnectz_contracts.compiling import fail
from konnectz_contracts.refs import REFERENCE
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.steps.iterator import ONLY_ONCE

__all__ = ["ONLY_ONCE", "CompileError", "check_references", "compile_flow"]


def check_references(node: Any, step: Any, allowed: set[str]) -> None:
    """A step may use outputs of nodes upstream of it only (never its own)."""
    for match in REFERENCE.finditer(step.model_dump_json()):
        node_id = match.group(1).partition(".")[0]
        if node_id == node.id:
            raise fail(node, SAME_SOURCE_AND_TARGET)
        if node_id not in allowed:
            raise fail(node, f"{{{{{match.group(1)[:100]}}}}} does not name the output of a node before this one")


def compile_flow(
    canvas: dict[str, Any],
    *,
    konnect_id: int,
    owner_id: int,
    name: str,
    webhook_token: str,
    timezone: str = "UTC",
) -> FlowSpec:
    flow = plan(canvas)
    trigger = compile_trigger(flow.trigger, TriggerInput(webhook_token=webhook_token, timezone=timezone))
    if not flow.actions:
        raise CompileError("Add at least one action after the trigger before publishing")
    steps: list[Any] = []
    for node in flow.actions:
        # One node is one step today; a node's timer (Set Delay: ``timerConfigs``) will compile to a
        # delay step before it, so a compiler may return a list.
        compiled = compile_step(node)
        for step in compiled if isinstance(compiled, list) else [compiled]:
            check_references(node, step, flow.ancestors(node.id))
            if step.kind == "iterator" and any(s.kind == "iterator" for s in steps):
                raise fail(node, ONLY_ONCE)
            steps.append(step)
    try:
        return FlowSpec(
            konnect_id=konnect_id,
            owner_id=owner_id,
            name=name,
            trigger_id=flow.trigger.id,
            trigger=trigger,
            steps=steps,
            timezone=timezone,
        )
    except ValidationError as exc:
        raise CompileError(f"invalid flow: {exc.errors()[0]['msg']}") from exc
