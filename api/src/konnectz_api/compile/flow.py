"""Compile an editor document (canvas_json) into the runner's FlowSpec.

The editor document is not what runs: publishing parses it into typed nodes
(:mod:`konnectz_contracts.canvas`), orders them by the links from the trigger (not by ``app_index``;
:mod:`konnectz_api.compile.plan`), compiles each node with the compiler of its kind
(:mod:`konnectz_api.compile.compilers`) and validates the result as a :class:`~konnectz_contracts.spec.FlowSpec`.
Every problem is a :class:`CompileError` whose message names the node to fix and uses the editor's
messages where it has one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from konnectz_api.compile.compilers import CompileError, TriggerInput, compile_step, compile_trigger
from konnectz_api.compile.plan import SAME_SOURCE_AND_TARGET, RouterPlan, plan, router_plans, run_order
from konnectz_contracts.canvas import Node
from konnectz_contracts.compiling import fail
from konnectz_contracts.on_error import OnError, compile_on_error
from konnectz_contracts.refs import REFERENCE
from konnectz_contracts.run_control import MAX_CONCURRENCY, MAX_DEADLINE_SECONDS, FailureAlert, RunControl
from konnectz_contracts.spec import CALL_WAITS, NOT_IN_PATH, FlowSpec, waits_for_flow
from konnectz_contracts.steps import join, respond, router
from konnectz_contracts.steps.iterator import ONLY_ONCE

__all__ = ["ONLY_ONCE", "CompileError", "check_references", "compile_flow", "compile_run_control"]

#: The longest digest interval of a failure alert (a day).
MAX_DIGEST_MINUTES = 1440


def compile_run_control(
    canvas: Any, *, konnect_id: int, owns_flow: Callable[[int], bool] | None = None
) -> RunControl | None:
    """The editor's Run settings (``canvas_json.runControl``) as the flow's :class:`RunControl`.

    ``owns_flow(konnect_id)`` says whether a flow exists and belongs to the owner: the failure alert may
    only run another flow of the same owner (never this one). Without it (a check from the cluster) the
    flow is not looked up."""
    raw = canvas.runControl
    if raw is None:
        return None
    deadline, limit, alert = raw.deadlineSeconds, raw.maxConcurrency, raw.alert
    if deadline is not None and not 1 <= deadline <= MAX_DEADLINE_SECONDS:
        raise CompileError(
            f"Run settings: the deadline must be between 1 second and {MAX_DEADLINE_SECONDS // 86400} days"
        )
    if limit is not None and not 1 <= limit <= MAX_CONCURRENCY:
        raise CompileError(f"Run settings: the number of concurrent runs must be between 1 and {MAX_CONCURRENCY}")
    failure: FailureAlert | None = None
    if alert is not None and (alert.email or alert.runKonnectId is not None):
        digest = 60 if alert.digestMinutes is None else alert.digestMinutes
        if not 1 <= digest <= MAX_DIGEST_MINUTES:
            raise CompileError(f"Run settings: failure alerts are grouped every 1 to {MAX_DIGEST_MINUTES} minutes")
        other = alert.runKonnectId
        if other is not None:
            if other == konnect_id:
                raise CompileError("Run settings: the failure alert cannot run this same flow; pick another flow")
            if owns_flow is not None and not owns_flow(other):
                raise CompileError(
                    f"Run settings: the failure alert's flow {other} does not exist or is not yours; pick another"
                )
        failure = FailureAlert(email=alert.email, run_konnect_id=other, digest_minutes=digest)
    if deadline is None and limit is None and failure is None:
        return None
    return RunControl(deadline_seconds=deadline, max_concurrency=limit, alert=failure)


def check_references(node: Node, step: Any, allowed: set[str], waits: frozenset[str] = frozenset()) -> None:
    """A step may use outputs of nodes upstream of it only (never its own); and the resume URL of any
    Wait for a call of the flow (``{{<wait node id>.resume_url}}``, known from the run's start)."""
    for match in REFERENCE.finditer(step.model_dump_json()):
        node_id, _, path = match.group(1).partition(".")
        if node_id in waits and path.strip() == "resume_url" and node_id != node.id:
            continue
        if node_id == node.id:
            raise fail(node, SAME_SOURCE_AND_TARGET)
        if node_id not in allowed:
            raise fail(node, f"{{{{{match.group(1)[:100]}}}}} does not name the output of a node before this one")


def _on_error(node: Node) -> OnError | None:
    """The node's error policy (its card's Retry and Continue on error), or None."""
    try:
        return compile_on_error(node.data.onError)
    except ValueError as exc:
        raise fail(node, f"On error: {exc}") from exc


def compile_flow(
    canvas: dict[str, Any],
    *,
    konnect_id: int,
    owner_id: int,
    name: str,
    webhook_token: str,
    timezone: str = "UTC",
    owns_flow: Callable[[int], bool] | None = None,
) -> FlowSpec:
    flow = plan(canvas)
    run_control = compile_run_control(flow.canvas, konnect_id=konnect_id, owns_flow=owns_flow)
    trigger = compile_trigger(flow.trigger, TriggerInput(webhook_token=webhook_token, timezone=timezone))
    if not flow.actions:
        raise CompileError("Add at least one action after the trigger before publishing")
    plans = router_plans(flow)
    on_path = {n.id: (shape, path) for shape in plans.values() for path in shape.paths for n in path.nodes}
    joins = {shape.join.id: shape for shape in plans.values() if shape.join is not None}
    compiled_ids: dict[str, list[str]] = {}
    steps: list[Any] = []
    routers: list[tuple[int, RouterPlan]] = []
    waits = frozenset(n.id for n in flow.actions if n.provider == "wait")  # their resume URLs (docs/waits.md)
    for node in run_order(flow, plans):
        # One node is one step, except a node's timer (Set Delay: ``timerConfigs``), which compiles to
        # a delay step before it; routers and joins take their paths from the links.
        if node.id in plans:
            routers.append((len(steps), plans[node.id]))
            compiled: Any = router.compile_node(node)
        elif node.id in joins:
            compiled = join.compile_node(node, router=joins[node.id].router.id)
        else:
            compiled = compile_step(node)
        compiled_ids[node.id] = []
        on_error = _on_error(node)
        for step in compiled if isinstance(compiled, list) else [compiled]:
            if on_error is not None and step.id == node.id:  # not the delay of its Set Delay
                step = step.model_copy(update={"on_error": on_error})
            check_references(node, step, flow.ancestors(node.id), waits)
            if step.kind == "iterator" and any(s.kind == "iterator" for s in steps):
                raise fail(node, ONLY_ONCE)
            if node.id in on_path and (step.kind in NOT_IN_PATH or waits_for_flow(step)):
                _shape, path = on_path[node.id]
                what = CALL_WAITS if waits_for_flow(step) else NOT_IN_PATH[step.kind]
                what += " (this node's Set Delay)" if step.id != node.id else ""
                raise fail(node, f"{what} cannot be inside a path (path {path.name}): one level of paths, no waits")
            compiled_ids[node.id].append(step.id)
            steps.append(step)
    for index, shape in routers:  # the router's steps per path, now that they are compiled
        ids = {p.id: [sid for n in p.nodes for sid in compiled_ids[n.id]] for p in shape.paths}
        steps[index] = router.compile_node(shape.router, steps=ids)
    # respond: a Respond step needs a Webhook answering by it, and such a Webhook a Respond step
    problem = respond.check_flow(trigger, steps)
    if problem is not None:
        at = next((n for n in flow.actions if n.id in {s.id for s in steps if s.kind == respond.KIND}), flow.trigger)
        raise fail(at, problem)
    try:
        return FlowSpec(
            konnect_id=konnect_id,
            owner_id=owner_id,
            name=name,
            trigger_id=flow.trigger.id,
            trigger=trigger,
            steps=steps,
            timezone=timezone,
            **({"run_control": run_control} if run_control is not None else {}),
        )
    except ValidationError as exc:
        raise CompileError(f"invalid flow: {exc.errors()[0]['msg']}") from exc
