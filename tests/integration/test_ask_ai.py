"""Ask AI end to end through real processes (api + runner + PostgreSQL + NATS) and the scripted model server.

An account of the "OpenAI-compatible Model" app is connected to the scripted server (konnectz_devstack.
scripted_model on 127.0.0.1, which the test platform allows: KONNECTZ_ALLOW_PRIVATE_NETWORKS=127.0.0.0/8;
an account on another private address is refused by the guard). Then a published Webhook -> Ask AI
(structured output) -> API Call flow sends a field of the model's JSON answer on; a 429 with Retry-After
is retried; an answer over the limit is cut with a note; an answer that does not match the schema ends
the run as ERROR with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.limits import AI_ANSWER_MAX_BYTES
from konnectz_contracts.steps import KINDS
from konnectz_contracts.steps.ask_ai import Config
from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import (
    add_account,
    api_call_node,
    app_node,
    canvas_node,
    capture_request,
    chain_canvas,
    publish_and_run,
    review_node,
    wait_until,
)
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration

COMPATIBLE = (132, "openai_compatible", "OpenAI-compatible Model")  # catalogue/apps/openai_compatible.yaml
KEY = "sk-scripted-integration-42"
SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative"]}},
        "required": ["sentiment"],
    }
)
SCRIPT = {
    "rules": [
        {"contains": "busy", "times": 1, "status": 429, "retry_after": 1},
        {"contains": "weird", "content": '{"sentiment": "furious"}'},
        {"contains": "novel", "content": "word ", "repeat": AI_ANSWER_MAX_BYTES // 5 + 100},
        {"contains": "review:", "content": '{"sentiment": "positive"}'},
    ]
}


def ask_canvas(account_id: int, crm_url: str, *, schema: str = SCHEMA, prompt: str = "") -> dict[str, Any]:
    config = [
        {"config_key": "model", "value": "scripted-1"},
        {"config_key": "system", "value": "Classify the sentiment of a product review."},
        {"config_key": "prompt", "value": prompt or "review: {{node-1.review}}"},
        {"config_key": "temperature", "value": "0"},
        {"config_key": "json_schema", "value": schema},
    ]
    ask = app_node(
        "node-2",
        "ActionNode",
        COMPATIBLE,
        2,
        event={"id": "ask_ai", "name": "Ask AI"},
        account={"id": account_id, "name": "scripted"},
        config=config,
        x=1000,
    )
    crm = api_call_node(
        crm_url + "/crm", node_id="node-3", body=[{"key": "sentiment", "value": "{{node-2.data.sentiment}}"}]
    )
    crm["position"]["x"] = 1500
    return chain_canvas([canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"), ask, crm], "Classify reviews")


class _Crm(JsonHandler):
    received: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        _Crm.received.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))))
        self._reply(200, {"ok": True})


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(SCRIPT, api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    with running_platform("konnectz-ask-ai-") as plat:
        yield plat


def test_the_node_compiles_and_says_what_is_missing() -> None:
    compile_node = KINDS["ask_ai"].compile_node

    def node(canvas: dict[str, Any]) -> Any:
        return Canvas.model_validate(canvas).node("node-2")

    step = compile_node(node(ask_canvas(5, "http://crm.example")))
    assert step == Config(
        id="node-2",
        name="OpenAI-compatible Model",
        app_id=132,
        account_id=5,
        model="scripted-1",
        system="Classify the sentiment of a product review.",
        prompt="review: {{node-1.review}}",
        temperature=0.0,
        json_schema=SCHEMA,
    )
    with pytest.raises(CompileError, match="the JSON schema is not valid JSON"):
        compile_node(node(ask_canvas(5, "http://crm.example", schema="{oops")))
    with pytest.raises(CompileError, match='must describe an object \\("type": "object"\\)'):
        compile_node(node(ask_canvas(5, "http://crm.example", schema='{"type": "string"}')))
    missing = ask_canvas(5, "http://crm.example")
    missing["apps"][1]["data"]["selectedAccount"] = None
    with pytest.raises(CompileError, match="choose an account"):
        compile_node(node(missing))


def test_a_published_flow_maps_a_field_of_the_structured_answer(platform: Platform, model: ScriptedModel) -> None:
    _Crm.received = []
    crm = LocalServer(_Crm)
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=60)
        headers = sign_up_and_in(api, "ask-ai@example.com", "correct horse battery")
        # The guard: an account on a private address the platform does not allow is refused when connected.
        refused = api.post(
            "/api/v1/authorization",
            json={"app_id": 132, "auth_response": {"instance_url": "http://10.20.30.40:9/v1", "api_key": KEY}},
            headers=headers,
        )
        assert refused.status_code >= 400 and "private address" in refused.text, refused.text
        # 127.0.0.1 is allowed on this platform (KONNECTZ_ALLOW_PRIVATE_NETWORKS=127.0.0.0/8): the scripted model.
        account_id = add_account(api, headers, 132, {"instance_url": model.url, "api_key": KEY})
        canvas = ask_canvas(account_id, crm.url)

        trigger = review_node(api, headers, canvas, "node-1", None)
        konnect_id, hook = trigger["konnect_id"], trigger["webhook_url"]
        capture_request(api, headers, konnect_id, hook, {"review": "Great blender"})
        tested = review_node(api, headers, canvas, "node-2", konnect_id)
        assert tested["test_status"] == "Success", tested
        assert tested["raw_response"]["data"] == {"sentiment": "positive"}
        assert tested["raw_response"]["tokens_in"] > 0 and tested["raw_response"]["tokens_out"] > 0

        (log,) = publish_and_run(api, headers, konnect_id, canvas, hook, {"review": "Love it"})
        assert log["status"] == "SUCCESS"
        assert _Crm.received[-1] == {"sentiment": "positive"}
        ask = task(api, headers, log["id"], "node-2")
        assert ask["data"]["input"]["prompt"] == "review: Love it"
        assert ask["data"]["input"]["model"] == "scripted-1"
        output = ask["data"]["output"]
        assert output["answer"] == '{"sentiment": "positive"}' and output["tokens_out"] == 2
        assert output["tokens_in"] == 10  # "Classify the sentiment of a product review." + "review: Love it"
        assert output["cost_usd"] is None  # a local server has no prices
        assert model.requests[-1]["body"]["messages"][1] == {"role": "user", "content": "review: Love it"}

        # A 429 with Retry-After: the request is sent again after it, and the run succeeds.
        before = len(model.requests)
        busy = run(api, headers, konnect_id, hook, {"review": "busy week, good kettle"}, count=2)
        assert busy["status"] == "SUCCESS"
        assert len(model.requests) - before == 2  # the 429, then the answer
        assert _Crm.received[-1] == {"sentiment": "positive"}

        # An answer that does not match the schema: ERROR with the reason; the next step does not run.
        sent = len(_Crm.received)
        weird = run(api, headers, konnect_id, hook, {"review": "weird"}, count=3)
        assert weird["status"] == "ERROR"
        failed = task(api, headers, weird["id"], "node-2")
        assert failed["status"] == "ERROR"
        assert "does not match the JSON schema at sentiment" in json.dumps(failed), failed
        assert len(_Crm.received) == sent

        # An answer over the limit is cut with a note (Test & Review of the step without a schema).
        long = ask_canvas(account_id, crm.url, schema="", prompt="write a novel about {{node-1.review}}")
        cut = review_node(api, headers, long, "node-2", konnect_id)
        assert cut["test_status"] == "Success", cut
        assert cut["raw_response"]["truncated"] is True
        assert len(cut["raw_response"]["answer"].encode()) == AI_ANSWER_MAX_BYTES
        assert "The answer was cut at 256 KiB" in cut["raw_response"]["note"]
    finally:
        crm.stop()


def task(api: httpx.Client, headers: dict[str, str], log_id: int, step_id: str) -> dict[str, Any]:
    tasks = api.get(f"/api/v1/task_logs/{log_id}/tasks", headers=headers).json()["tasks"]
    return next(t for t in tasks if t["step_id"] == step_id)


def run(
    api: httpx.Client, headers: dict[str, str], konnect_id: int, hook: str, payload: dict[str, Any], *, count: int
) -> dict[str, Any]:
    """Post ``payload`` to the published flow and wait for its task log (the ``count``-th): that log."""
    assert httpx.post(hook, json=payload).json().get("status") == "accepted"

    def logs() -> list[dict[str, Any]] | None:
        found = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
        return found if len(found) >= count and all(log["status"] != "RUNNING" for log in found) else None

    found = wait_until(logs, timeout=60, what=f"task log {count}")
    return max(found, key=lambda log: log["id"])
