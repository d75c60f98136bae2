"""Compiling paths that join: a router's links by sourceHandle, its join, the spec order, the errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from konnectz_api.compile import CompileError, compile_flow
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
