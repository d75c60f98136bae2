"""The Hash add-on (the CONTRIBUTING.md walk-through), from its step to a published flow.

Its compile and run as units, then end to end through real processes (api + runner + PostgreSQL +
NATS): the catalogue lists it, Test & Review runs it on a captured webhook request, and a
published Webhook -> Hash flow writes the digest into its task log.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.steps import COMPILERS
from konnectz_contracts.steps.hash import Config
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import canvas_node, capture_request, chain_canvas, publish_and_run, review_node
from konnectz_devstack.testing import sign_up as sign_up_and_in
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.engine import StepContext, run_step

pytestmark = pytest.mark.integration

ORDER = {"email": "ada@example.com", "total": 42}


def hash_canvas(**fields: str) -> dict[str, Any]:
    responses = [{"config_key": key, "value": value} for key, value in fields.items()]
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node("node-2", "ActionNode", "hash", 2, "Hash", configResponses=responses),
    ]
    return chain_canvas(apps, "Hash the e-mail")


def node(canvas: dict[str, Any]) -> Any:
    return Canvas.model_validate(canvas).node("node-2")


async def test_the_step_hashes_the_resolved_text() -> None:
    async with httpx.AsyncClient() as http:
        ctx = StepContext(outputs={"node-1": ORDER}, http=http, guard=NetGuard(parse_networks("")))
        await _hashes(ctx)


async def _hashes(ctx: StepContext) -> None:
    sha = await run_step(Config(id="node-2", name="Hash", text="{{node-1.email}}"), ctx)
    assert sha.output == {
        "hash": hashlib.sha256(b"ada@example.com").hexdigest(),
        "algorithm": "sha256",
        "encoding": "hex",
        "length": 15,
    }
    md5 = await run_step(Config(id="node-2", name="Hash", text="abc", algorithm="md5", encoding="base64"), ctx)
    assert md5.output["hash"] == "kAFQmDzST7DWlj99KOF/cg=="


def test_the_node_compiles_and_says_what_is_missing() -> None:
    step = COMPILERS["hash"](node(hash_canvas(text="{{node-1.email}}", algorithm="sha512")))
    assert step == Config(id="node-2", name="Hash", text="{{node-1.email}}", algorithm="sha512")
    with pytest.raises(CompileError, match="enter the text to hash"):
        COMPILERS["hash"](node(hash_canvas(text=" ")))
    with pytest.raises(CompileError, match="the algorithm must be one of"):
        COMPILERS["hash"](node(hash_canvas(text="x", algorithm="crc32")))


def test_a_published_webhook_to_hash_flow_logs_the_digest() -> None:
    expected = hashlib.sha256(b"ada@example.com").hexdigest()
    with running_platform("konnectz-hash-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up_and_in(api, "hash@example.com", "correct horse battery")
        add_ons = api.get("/api/v1/apps/add_on_apps", headers=headers).json()["apps"]
        assert {"name": "Hash", "provider": "hash", "app_type": "ADD_ON"}.items() <= next(
            app for app in add_ons if app["provider"] == "hash"
        ).items()
        canvas = hash_canvas(text="{{node-1.email}}")

        def test(node_id: str, konnect_id: int | None) -> dict[str, Any]:
            return review_node(api, headers, canvas, node_id, konnect_id)

        trigger = test("node-1", None)
        konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
        capture_request(api, headers, konnect_id, hook, ORDER)
        tested = test("node-2", konnect_id)
        assert tested["test_status"] == "Success" and tested["raw_response"]["hash"] == expected

        (log,) = publish_and_run(api, headers, konnect_id, canvas, hook, ORDER)
        assert log["status"] == "SUCCESS"
        (task,) = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
        assert task["step_id"] == "node-2"
        assert task["data"]["output"]["hash"] == expected
        assert task["data"]["input"] == {"text": "ada@example.com", "algorithm": "sha256"}
