"""Paths that join, through real processes (api + runner + PostgreSQL + NATS).

Webhook -> Router (Paid, Big order, Rest = otherwise) -> a Hash on each path -> Join -> a Hash of
``{{join.Paid.hash}}`` and ``{{join.Big order.hash}}``: Test & Review of the router and the join,
then a published run whose task log lists the router, both chosen paths' steps with their path,
the skipped path's step as SKIPPED, the join's merged output and the step after it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import canvas_node, capture_request, publish_and_run, review_node
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration

ORDER = {"email": "ada@example.com", "paid": "yes", "total": 250}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hash_node(node_id: str, index: int, text: str) -> dict[str, Any]:
    responses = [{"config_key": "text", "value": text}]
    return canvas_node(node_id, "ActionNode", "hash", index, f"Hash {node_id}", configResponses=responses)


def condition(field: str, operator: str, value: str) -> dict[str, Any]:
    return {"field": field, "operator": operator, "valueOfFilter": value}


def paths_canvas() -> dict[str, Any]:
    paths = [
        {"id": "path-1", "name": "Paid", "conditions": [condition("{{node-1.paid}}", "Equal To", "yes")]},
        {"id": "path-2", "name": "Big order", "conditions": [condition("{{node-1.total}}", "Greater Than", "100")]},
        {"id": "path-3", "name": "Rest", "otherwise": True, "conditions": []},
    ]
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node("router", "router", "router", 2, "Router", routerMode="parallel", routerPaths=paths),
        hash_node("a1", 3, "{{node-1.email}}"),
        hash_node("b1", 3, "{{node-1.total}}"),
        hash_node("r1", 3, "rest"),
        canvas_node("join", "join", "join", 4, "Join", joinWait="all"),
        hash_node("after", 5, "{{join.Paid.hash}}|{{join.Big order.hash}}"),
    ]
    pairs = [
        ("node-1", "router", None),
        ("router", "a1", "path-1"),
        ("router", "b1", "path-2"),
        ("router", "r1", "path-3"),
        ("a1", "join", None),
        ("b1", "join", None),
        ("r1", "join", None),
        ("join", "after", None),
    ]
    links = [{"id": f"e{i}", "source": s, "target": t, "sourceHandle": h} for i, (s, t, h) in enumerate(pairs)]
    return {"apps": apps, "links": links, "dataForSelect": {}, "flowName": "Paths"}


def test_a_published_router_and_join_run_both_paths_and_merge_them() -> None:
    paid, big = sha("ada@example.com"), sha("250")
    with running_platform("konnectz-paths-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up_and_in(api, "paths@example.com", "correct horse battery")
        add_ons = {app["provider"]: app for app in api.get("/api/v1/apps/add_on_apps", headers=headers).json()["apps"]}
        assert add_ons["router"]["name"] == "Router" and add_ons["join"]["name"] == "Join"
        canvas = paths_canvas()

        def test(node_id: str, konnect_id: int | None) -> dict[str, Any]:
            return review_node(api, headers, canvas, node_id, konnect_id)

        trigger = test("node-1", None)
        konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
        capture_request(api, headers, konnect_id, hook, ORDER)

        routed = test("router", konnect_id)
        assert routed["test_status"] == "Success", routed
        assert routed["raw_response"] == {"paths": ["Paid", "Big order"], "mode": "parallel"}
        assert routed["display_message"] == "Paths chosen: Paid, Big order"
        assert test("a1", konnect_id)["raw_response"]["hash"] == paid
        assert test("b1", konnect_id)["raw_response"]["hash"] == big
        joined = test("join", konnect_id)  # the path ends tested so far; Rest's end was not tested
        assert joined["test_status"] == "Success", joined
        assert joined["raw_response"]["Paid"]["hash"] == paid
        assert joined["raw_response"]["Big order"]["hash"] == big
        assert joined["raw_response"]["Rest"] is None

        (log,) = publish_and_run(api, headers, konnect_id, canvas, hook, ORDER)
        assert log["status"] == "SUCCESS"
        tasks = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
        rows = [(t["step_id"], t["status"], t["data"].get("path")) for t in tasks]
        assert rows == [
            ("router", "SUCCESS", None),
            ("a1", "SUCCESS", "router/Paid"),
            ("b1", "SUCCESS", "router/Big order"),
            ("r1", "SKIPPED", "router/Rest"),
            ("join", "SUCCESS", None),
            ("after", "SUCCESS", None),
        ]
        by_id = {t["step_id"]: t for t in tasks}
        skipped = "Path Rest: the otherwise path runs only when no other path's conditions pass"
        assert by_id["r1"]["data"]["stop"] == skipped
        assert by_id["join"]["data"]["output"] == {
            "Paid": {"hash": paid, "algorithm": "sha256", "encoding": "hex", "length": 15},
            "Big order": {"hash": big, "algorithm": "sha256", "encoding": "hex", "length": 3},
            "Rest": None,
        }
        assert by_id["after"]["data"]["input"]["text"] == f"{paid}|{big}"
        assert by_id["after"]["data"]["output"]["hash"] == sha(f"{paid}|{big}")
