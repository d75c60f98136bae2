"""Evaluations end to end with real processes (api + runner + PostgreSQL + NATS) and the scripted model server.

A published Webhook -> Ask AI (structured output) -> API Call flow classifies reviews; its evaluation set
(four cases, one of which the model gets wrong) stops before the API Call (a step with effects). The API
run scores the live revision 3/4; ``python -m konnectz_api eval`` prints the table and exits 0 at a 0.7
threshold, 1 at 0.8, and 1 for a draft whose changed prompt the model no longer answers well (the CI gate on
a prompt change); 2 for a flow or revision that is not there. No task log is written and no task counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.scripted_model import ScriptedModel
from konnectz_devstack.testing import (
    add_account,
    api_call_node,
    app_node,
    canvas_node,
    chain_canvas,
    publish_konnect,
    test_trigger,
)
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration

COMPATIBLE = (132, "openai_compatible", "OpenAI-compatible Model")  # catalogue/apps/openai_compatible.yaml
KEY = "sk-scripted-evaluations-7"
SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"sentiment": {"type": "string", "enum": ["positive", "negative"]}},
        "required": ["sentiment"],
    }
)
#: The model: negative for "terrible" and "awful" reviews, positive for every other one; a prompt without
#: "review:" gets the default answer (the schema's first enum value: positive).
SCRIPT = {
    "rules": [
        {"contains": "review: terrible", "content": '{"sentiment": "negative"}'},
        {"contains": "review: awful", "content": '{"sentiment": "negative"}'},
        {"contains": "review:", "content": '{"sentiment": "positive"}'},
    ]
}


def canvas(account_id: int, crm_url: str, prompt: str = "review: {{node-1.review}}") -> dict[str, Any]:
    config = [
        {"config_key": "model", "value": "scripted-1"},
        {"config_key": "system", "value": "Classify the sentiment of a product review."},
        {"config_key": "prompt", "value": prompt},
        {"config_key": "json_schema", "value": SCHEMA},
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
    crm = api_call_node(crm_url, node_id="node-3", body=[{"key": "sentiment", "value": "{{node-2.data.sentiment}}"}])
    crm["position"]["x"] = 1500
    return chain_canvas([canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"), ask, crm], "Reviews")


def case(name: str, review: str, sentiment: str) -> dict[str, Any]:
    return {
        "name": name,
        "input": {"review": review},
        "checks": [
            {"op": "equals", "path": "data.sentiment", "value": sentiment},
            {"op": "schema", "path": "data", "json_schema": json.loads(SCHEMA)},
            {"op": "between", "path": "tokens_out", "min": 1, "max": 100},
        ],
    }


CASES = [
    case("praise", "great kettle, boils fast", "positive"),
    case("terrible", "terrible lid, leaks", "negative"),
    case("awful", "awful smell of plastic", "negative"),
    case("sarcasm", "oh sure, it broke on day two", "negative"),  # the model says positive: fails
]


class _Crm(JsonHandler):
    received: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        _Crm.received.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self._reply(200, {"ok": True})


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(SCRIPT, api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def platform() -> Iterator[Platform]:
    with running_platform("konnectz-evals-") as plat:
        yield plat


def cli(platform: Platform, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m konnectz_api eval ...`` on the server (the api's environment), bounded."""
    return subprocess.run(
        [sys.executable, "-m", "konnectz_api", "eval", *args],
        env=platform.component_env("api"),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_a_prompt_change_is_gated_by_the_score(platform: Platform, model: ScriptedModel) -> None:
    _Crm.received = []
    crm = LocalServer(_Crm)
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=120)
        headers = sign_up_and_in(api, "evals@example.com", "correct horse battery")
        account_id = add_account(api, headers, 132, {"instance_url": model.url, "api_key": KEY})
        live = canvas(account_id, crm.url + "/crm")
        konnect_id = test_trigger(api, headers, live)
        assert publish_konnect(api, headers, konnect_id, live)["revision"] == 1
        put = api.put(
            f"/api/v1/konnects/{konnect_id}/evaluations",
            json={"cases": CASES, "threshold": 0.7, "stop_before_effects": True},
            headers=headers,
        )
        assert put.status_code == 200, put.text
        used = api.get("/api/v1/dashboard/stats", headers=headers).json()["task_consumed"]
        asked = len(model.requests)

        r = api.post(f"/api/v1/konnects/{konnect_id}/evaluations/run", json={}, headers=headers)
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["revision"], body["passed"], body["total"], body["score"]) == (1, 3, 4, 0.75)
        assert body["passed_threshold"] is True and body["threshold"] == 0.7
        verdicts = {c["name"]: (c["passed"], c["status"]) for c in body["cases"]}
        assert verdicts == {
            "praise": (True, "STOPPED"),  # stopped before the API Call, after Ask AI
            "terrible": (True, "STOPPED"),
            "awful": (True, "STOPPED"),
            "sarcasm": (False, "STOPPED"),
        }
        sarcasm = next(c for c in body["cases"] if c["name"] == "sarcasm")
        wrong = sarcasm["checks"][0]
        assert wrong["step"] == "node-2" and wrong["actual"] == "positive" and wrong["reason"] == 'expected "negative"'
        assert all(c["passed"] for c in sarcasm["checks"][1:])
        assert len(model.requests) - asked == 4  # one model call per case
        assert model.requests[-1]["body"]["messages"][1]["content"].startswith("review: ")
        assert _Crm.received == []  # stop_before_effects: the API Call was never sent

        # The CLI on the server: the table and the score; the exit code gates on the threshold.
        passed = cli(platform, "--flow", str(konnect_id))
        assert passed.returncode == 0, passed.stderr + passed.stdout
        assert "score 0.750 (3/4) on revision 1: passed (threshold 0.7)" in passed.stdout, passed.stdout
        assert "sarcasm" in passed.stdout and 'node-2.data.sentiment equals: expected "negative"' in passed.stdout
        below = cli(platform, "--flow", str(konnect_id), "--threshold", "0.8", "--json")
        assert below.returncode == 1, below.stderr
        scored = json.loads(below.stdout)
        assert scored["score"] == 0.75 and scored["passed_threshold"] is False and scored["threshold"] == 0.8

        # A prompt change saved as a draft: the model no longer sees "review:", every review is "positive".
        changed = canvas(account_id, crm.url + "/crm", prompt="Opinion: {{node-1.review}}")
        saved = api.post(
            "/api/v1/konnects/save_konnect",
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": changed},
            headers=headers,
        )
        assert saved.status_code == 200, saved.text
        draft = cli(platform, "--flow", str(konnect_id), "--revision", "draft")
        assert draft.returncode == 1, draft.stderr + draft.stdout
        assert "score 0.250 (1/4) on the draft: FAILED (threshold 0.7)" in draft.stdout, draft.stdout
        assert model.requests[-1]["body"]["messages"][1]["content"].startswith("Opinion: ")

        # Errors: exit 2 with the reason on stderr.
        missing = cli(platform, "--flow", "999999999")
        assert missing.returncode == 2 and "no flow 999999999" in missing.stderr
        gone = cli(platform, "--flow", str(konnect_id), "--revision", "7")
        assert gone.returncode == 2 and f"Revision 7 of konnect {konnect_id} not found" in gone.stderr
        bad = cli(platform, "--flow", str(konnect_id), "--threshold", "2")
        assert bad.returncode == 2 and "less than or equal to 1" in bad.stderr, bad.stderr

        # Not runs: no task log, no task of the quota.
        logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
        assert logs == []
        assert api.get("/api/v1/dashboard/stats", headers=headers).json()["task_consumed"] == used
        last = api.get(f"/api/v1/konnects/{konnect_id}/evaluations", headers=headers).json()["last_run"]
        assert last["revision"] is None and last["passed"] == 1  # the draft's run was the last one
    finally:
        crm.stop()
