"""Compiling paths that join: a router's links by sourceHandle, its join, the spec order, the errors;
the decompiled canvas; the task-log status of runs with paths."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from konnectz_api.compile.decompile import canvas_of
from konnectz_api.compile.flow import CompileError, compile_flow
from konnectz_api.task_status import log_status
from konnectz_contracts.events import StepResult, TaskEvent
from konnectz_devstack.testing import canvas_node


def hash_node(node_id: str, index: int, text: str = "{{node-1.email}}", **data: Any) -> dict[str, Any]:
    responses = [{"config_key": "text", "value": text}]
    return canvas_node(node_id, "ActionNode", "hash", index, f"Hash {node_id}", configResponses=responses, **data)


def condition(field: str, operator: str, value: str) -> dict[str, Any]:
    return {"field": field, "operator": operator, "valueOfFilter": value}


def router_node(paths: list[dict[str, Any]], mode: str = "parallel") -> dict[str, Any]:
    return canvas_node("router", "router", "router", 2, "Router", routerMode=mode, routerPaths=paths)


def join_node(wait: str = "all") -> dict[str, Any]:
    return canvas_node("join", "join", "join", 5, "Join", joinWait=wait)


PATHS = [
    {
        "id": "path-1",
        "name": "Paid",
        "otherwise": False,
        "conditions": [condition("{{node-1.paid}}", "Equal To", "yes")],
    },
    {
        "id": "path-2",
        "name": "Big order",
        "otherwise": False,
        "conditions": [
            condition("{{node-1.total}}", "Greater Than", "100"),
            {**condition("{{node-1.total}}", "Lesser Than", "1000"), "queryOperator": "OR"},
        ],
    },
    {"id": "path-3", "name": "Rest", "otherwise": True, "conditions": []},
]


def link(source: str, target: str, handle: str | None = None) -> dict[str, Any]:
    return {"id": f"{source}-{target}", "source": source, "target": target, "sourceHandle": handle}


def canvas() -> dict[str, Any]:
    """Webhook -> Router: Paid (a1 -> a2), Big order (b1), Rest (empty) -> Join -> after."""
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        router_node(copy.deepcopy(PATHS)),
        hash_node("a1", 3),
        hash_node("a2", 4, "{{a1.hash}}"),
        hash_node("b1", 3),
        join_node(),
        hash_node("after", 6, "{{join.Paid.hash}} {{join.Big order.hash}} {{a2.hash}}"),
    ]
    links = [
        link("node-1", "router"),
        link("router", "b1", "path-2"),  # links in any order: the paths' order is the router's
        link("router", "a1", "path-1"),
        link("a1", "a2"),
        link("a2", "join"),
        link("b1", "join"),
        link("router", "join", "path-3"),
        link("join", "after"),
    ]
    return {"apps": apps, "links": links, "flowName": "Paths"}


def compiled(raw: dict[str, Any]) -> Any:
    return compile_flow(raw, konnect_id=1, owner_id=2, name="Paths", webhook_token="t" * 32)


def refused(raw: dict[str, Any]) -> str:
    with pytest.raises(CompileError) as caught:
        compiled(raw)
    return str(caught.value)


def test_router_paths_and_join_compile_in_the_spec_order() -> None:
    flow = compiled(canvas())
    assert [s.id for s in flow.steps] == ["router", "a1", "a2", "b1", "join", "after"]
    router = flow.steps[0]
    assert router.kind == "router" and router.mode == "parallel" and router.name == "Router"
    assert [(p.name, p.otherwise, p.steps) for p in router.paths] == [
        ("Paid", False, ["a1", "a2"]),
        ("Big order", False, ["b1"]),
        ("Rest", True, []),
    ]
    assert router.paths[0].conditions[0].model_dump() == {
        "field": "{{node-1.paid}}",
        "operator": "equals",
        "value": "yes",
        "join": "AND",
    }
    assert [c.join for c in router.paths[1].conditions] == ["AND", "OR"]
    assert flow.steps[4].model_dump() == {
        "id": "join",
        "name": "Join",
        "kind": "join",
        "router": "router",
        "wait": "all",
    }


def test_first_match_and_join_any_and_a_router_without_join() -> None:
    raw = canvas()
    raw["apps"][1]["data"]["routerMode"] = "first_match"
    raw["apps"][5]["data"]["joinWait"] = "any"
    flow = compiled(raw)
    assert flow.steps[0].mode == "first_match" and flow.steps[4].wait == "any"
    # Without a join, the paths end the flow; a path without a link is empty.
    raw = canvas()
    raw["apps"] = [a for a in raw["apps"] if a["id"] not in ("join", "after")]
    raw["links"] = [lk for lk in raw["links"] if "join" not in (lk["source"], lk["target"])]
    flow = compiled(raw)
    assert [s.id for s in flow.steps] == ["router", "a1", "a2", "b1"]
    assert flow.steps[0].paths[2].steps == []


def test_a_path_step_cannot_use_another_paths_output() -> None:
    raw = canvas()
    raw["apps"][4] = hash_node("b1", 3, "{{a1.hash}}")
    assert "does not name the output of a node before this one" in refused(raw)


def test_compile_errors_name_what_to_fix() -> None:
    raw = canvas()
    raw["links"].append(link("b1", "a2"))  # a node reached from two paths
    assert refused(raw).startswith("Hash a2 (a2): ")
    assert "only a join can have several incoming links" in refused(raw)

    raw = canvas()
    raw["links"][1]["sourceHandle"] = None
    assert (
        refused(raw) == "Router (router): the link to Hash b1 (b1) starts from no path: link it from one of the paths"
    )

    raw = canvas()
    raw["links"][1]["sourceHandle"] = "path-9"
    assert "starts from path 'path-9', which it does not have" in refused(raw)

    raw = canvas()
    raw["links"].append(link("router", "after", "path-1"))
    assert "path Paid has two links: a path is one line" in refused(raw)

    raw = canvas()
    raw["links"] = [lk for lk in raw["links"] if lk["id"] != "b1-join"]
    assert refused(raw) == "Hash b1 (b1): path Big order ends here: link its last node to Join (join)"

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"][0]["conditions"] = []
    assert "path Paid: add at least one condition (or make it the otherwise path)" in refused(raw)

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"][0]["conditions"][0]["operator"] = "Roughly"
    assert refused(raw) == "Router (router): path Paid: condition 1: unknown operator 'Roughly'"

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"][1]["name"] = "Paid"
    assert "two paths are named 'Paid'" in refused(raw)

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"][0]["otherwise"] = True
    raw["apps"][1]["data"]["routerPaths"][0]["conditions"] = []
    assert "at most one otherwise path" in refused(raw)

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"][0]["name"] = "Paid.total"
    assert refused(raw) == (
        "Router (router): path 1: a path name has 1 to 40 letters, digits, spaces, - or _ (not 'Paid.total')"
    )

    raw = canvas()
    raw["apps"][1]["data"]["routerPaths"] = [
        {"id": f"p{i}", "name": f"P{i}", "conditions": [condition("{{node-1.x}}", "Is Exist", "")]} for i in range(11)
    ]
    raw["links"] = [link("node-1", "router")]
    raw["apps"] = raw["apps"][:2]
    assert refused(raw) == "Router (router): a router has at most 10 paths"

    raw = canvas()  # a delay inside a path
    timer = {"delay_type": 515, "delay_unit": 322, "delay_value": "3"}
    raw["apps"][3] = canvas_node("a2", "InHouse", "delay", 4, "Delay", timerConfigs=timer)
    message = refused(raw)
    assert message.startswith("Delay (a2): ") and "cannot be inside a path (path Paid)" in message, message

    raw = canvas()  # a router inside a path
    raw["apps"][3] = {**router_node([PATHS[2]]), "id": "a2"}
    assert "a router cannot be inside a path (path Paid of Router (router))" in refused(raw)

    raw = canvas()  # a join without a router
    raw["apps"][1] = hash_node("router", 2)
    raw["links"] = [link("node-1", "router"), link("router", "join"), link("join", "after")]
    raw["apps"] = [a for a in raw["apps"] if a["id"] in ("node-1", "router", "join", "after")]
    assert refused(raw) == (
        "Join (join): a join closes the paths of a router: link the end of each path of a router to it"
    )

    raw = canvas()  # a join fed by a node that is not the end of a path
    raw["links"].append(link("node-1", "join"))
    assert "is not the end of a path of Router (router)" in refused(raw)


def test_a_router_flow_decompiles_to_a_canvas_that_compiles_back_to_it() -> None:
    flow = compiled(canvas())
    # The hash nodes are kept as they were (an unchanged step); the router and the join are rebuilt.
    back = canvas_of(flow, canvas(), unchanged={"node-1", "a1", "a2", "b1", "after"})
    assert [n["type"] for n in back["apps"][:2]] == ["WebhookInner", "router"]
    handles = {(lk["source"], lk["target"], lk.get("sourceHandle")) for lk in back["links"]}
    assert ("router", "a1", "path-1") in handles and ("router", "join", "path-3") in handles
    assert ("a2", "join", None) in handles and ("join", "after", None) in handles
    assert [(s.id, s.kind) for s in compiled(back).steps] == [(s.id, s.kind) for s in flow.steps]
    assert compiled(back).steps[0] == flow.steps[0] and compiled(back).steps[4] == flow.steps[4]


def test_the_task_log_status_of_runs_with_paths() -> None:
    def result(step_id: str, status: str = "SUCCESS", stop: str | None = None, path: str | None = None) -> StepResult:
        now = datetime.now(UTC)
        return StepResult(
            step_id=step_id, name=step_id, status=status, started_at=now, finished_at=now, input={}, output={},
            stop=stop, path=path,
        )  # fmt: skip

    def status(*steps: StepResult) -> str:
        now = datetime.now(UTC)
        event = TaskEvent(
            run_id="r", konnect_id=1, owner_id=2, konnect_name="P", status="SUCCESS", started_at=now,
            finished_at=now, trigger_id="node-1", trigger_output={}, steps=list(steps),
        )  # fmt: skip
        return log_status(event)

    skipped = result("b", "SKIPPED", "Path B: its conditions did not pass", "router/B")
    assert status(result("router"), result("a", path="router/A"), skipped, result("join")) == "SUCCESS"
    # A filter on a path stops that path only; the join went on (wait any): the run went through.
    path_filter = result("f", stop="Stopped by condition 1", path="router/A")
    assert status(result("router"), path_filter, result("b", path="router/B"), result("join")) == "SUCCESS"
    # The join (wait all) or the router (no path chosen) stopping the run: FILTERED, like a filter.
    assert status(result("router"), path_filter, result("join", stop="Path A did not reach the join")) == "FILTERED"
    assert status(result("router", stop="No path's conditions passed"), skipped) == "FILTERED"


def test_a_router_and_join_known_by_their_provider_compile_the_same() -> None:
    raw = canvas()
    raw["apps"][1]["type"] = "InHouse"  # an editor that keeps add-ons as InHouse nodes
    raw["apps"][5]["type"] = "InHouse"
    assert compiled(raw) == compiled(canvas())
    raw["apps"][1]["data"]["routerPaths"] = [{"id": "p", "name": "A", "conditions": "nope"}]
    assert refused(raw).startswith("Router (router): a path is malformed")


def test_two_paths_cannot_start_at_the_same_node() -> None:
    raw = canvas()
    raw["links"][1]["target"] = "a1"  # Big order -> a1 too
    raw["apps"] = [a for a in raw["apps"] if a["id"] != "b1"]
    raw["links"] = [lk for lk in raw["links"] if lk["source"] != "b1"]
    assert "Hash a1 (a1): reached from two paths (Paid and Big order)" in refused(raw)


def test_a_second_router_after_a_join() -> None:
    one = [{"id": "p", "name": "P", "conditions": [condition("{{node-1.paid}}", "Equal To", "yes")]}]
    two = [{"id": "q", "name": "Q", "conditions": [condition("{{j1.P.hash}}", "Is Exist", "")]}]
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        {**router_node(one), "id": "r1"},
        hash_node("x", 3),
        {**join_node(), "id": "j1"},
        {**router_node(two), "id": "r2"},
        hash_node("y", 6, "{{j1.P.hash}}"),
        {**join_node(), "id": "j2"},
        hash_node("z", 8, "{{j2.Q.hash}} {{x.hash}}"),
    ]
    pairs = [("node-1", "r1", None), ("r1", "x", "p"), ("x", "j1", None), ("j1", "r2", None), ("r2", "y", "q")]
    pairs += [("y", "j2", None), ("j2", "z", None)]
    flow = compiled({"apps": apps, "links": [link(s, t, h) for s, t, h in pairs], "flowName": "Two"})
    assert [s.id for s in flow.steps] == ["r1", "x", "j1", "r2", "y", "j2", "z"]
    assert flow.steps[3].paths[0].steps == ["y"] and flow.steps[5].router == "r2"
