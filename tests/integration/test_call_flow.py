"""Call a flow (issue 37 item 5) through real processes: api + runner + PostgreSQL + NATS.

Called flows start with *Called by a flow or AI tool* (inputs ``email``, required, and ``n``, a number):

- *Answer*: -> Respond (body ``{"answer": "{{node-1.email}}", "n": {{node-1.n}}}``): its result is the body;
- *Look up*: -> API Call to a local server: its result is the API Call's output (its last step's);
- *Broken*: -> API Call answered 500: it fails.

Callers: Webhook -> Call a Flow (node-2) -> API Call ``/after`` (sending what the call brought back).
Checked: waiting with a Respond result and with a last-step result, going on at once, a called run that
fails (the caller's step fails with its error; with On error *continue* the caller goes on), the task logs'
links both ways, refusals at publish (a cycle naming the flows, a chain deeper than 5, a flow that is not
published / not a flow-call flow / another account's) and at run time (another account's flow asked for
directly on NATS, bad inputs), and a runner killed while a caller waits: resumed exactly once.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest

from konnectz_contracts.calls import CALL_SUBJECT, CallStart, CallStarted
from konnectz_contracts.events import CallerLink
from konnectz_contracts.nats_auth import RUNNER, connect_options
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import make_platform, running_platform
from konnectz_devstack.testing import api_call_node, canvas_node, chain_canvas, publish_canvas, sign_up, wait_until

pytestmark = pytest.mark.integration


class Other(JsonHandler):
    """The other system: records each call; ``/broken`` answers 500."""

    calls: list[tuple[str, dict[str, Any]]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with Other.lock:
            Other.calls.append((self.path, body))
        if self.path == "/broken":
            self._reply(500, {"error": "the lookup service is down"})
        else:
            self._reply(200, {"customer": f"C-{body.get('email')}", "path": self.path})


def calls_to(path: str) -> list[dict[str, Any]]:
    with Other.lock:
        return [body for p, body in Other.calls if p == path]


def trigger() -> dict[str, Any]:
    return canvas_node(
        "node-1",
        "InHouse",
        "flow_call",
        1,
        "Called by a flow or AI tool",
        selectedEvent={"id": "flow_call", "name": "Flow Called"},
        selectedAddonsValue={
            "inputs": [
                {"key": "email", "label": "E-mail", "type": "email", "required": True},
                {"key": "n", "label": "N", "type": "number"},
            ],
            "description": "a called flow",
        },
    )


def webhook() -> dict[str, Any]:
    return canvas_node(
        "node-1", "WebhookInner", "webhook", 1, "Webhook", selectedEvent={"id": "catch_hook", "name": "Catch Webhook"}
    )


def call_node(node_id: str, index: int, flow_id: int, mode: str = "wait", **extra: Any) -> dict[str, Any]:
    config = [{"config_key": "flow", "value": flow_id}, {"config_key": "mode", "value": mode}]
    config += [{"config_key": k, "value": v} for k, v in extra.items() if k != "inputs"]
    inputs = extra.get("inputs", {"email": "{{node-1.email}}", "n": "{{node-1.n}}"})
    node = canvas_node(
        node_id,
        "ActionNode",
        "call_flow",
        index,
        "Call a flow",
        configResponses=config,
        selectedAddonsValue={"inputs": inputs},
    )
    return node


def respond_node(node_id: str, index: int, body: str) -> dict[str, Any]:
    config = [{"config_key": "status", "value": "200"}, {"config_key": "body", "value": body}]
    return canvas_node(node_id, "ActionNode", "respond", index, "Respond", configResponses=config)


def spaced(apps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for i, app in enumerate(apps):
        app["position"]["x"] = 600 * (i + 1)
    return chain_canvas(apps, name)


def callee_canvas(name: str, url: str, kind: str) -> dict[str, Any]:
    if kind == "answer":
        last = respond_node("node-2", 2, '{"answer": "{{node-1.email}}", "n": {{node-1.n}}}')
    else:
        last = api_call_node(url + ("/broken" if kind == "broken" else "/lookup"), node_id="node-2",
                             body=[{"key": "email", "value": "{{node-1.email}}"}])  # fmt: skip
    return spaced([trigger(), last], name)


def caller_canvas(name: str, url: str, flow_id: int, mode: str = "wait", **extra: Any) -> dict[str, Any]:
    on_error = extra.pop("on_error", None)
    call = call_node("node-2", 2, flow_id, mode, **extra)
    if on_error is not None:
        call["data"]["onError"] = on_error
    sent = [{"key": "n", "value": "{{node-1.n}}"}, {"key": "got", "value": "{{node-2}}"}]
    after = api_call_node(url + "/after", node_id="node-3", body=sent)
    return spaced([webhook(), call, after], name)


def chain_callee(name: str, calls: int | None) -> dict[str, Any]:
    """A flow-call flow that calls ``calls`` (going on at once), or ends with a Respond."""
    last = call_node("node-2", 2, calls, "go_on") if calls is not None else respond_node("node-2", 2, "{}")
    return spaced([trigger(), last], name)


class Account:
    def __init__(self, api: httpx.Client, email: str) -> None:
        self.api = api
        self.headers = sign_up(api, email, "correct horse battery")

    def publish(self, canvas: dict[str, Any]) -> dict[str, Any]:
        return publish_canvas(self.api, self.headers, canvas)

    def refused(self, canvas: dict[str, Any]) -> str:
        """Publish ``canvas`` expecting a 422: its message."""
        made = self.api.post(
            "/api/v1/konnects/test_and_review",
            headers=self.headers,
            json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas},
        )
        assert made.status_code == 200, made.text
        reply = self.api.post(
            "/api/v1/konnects/publish_konnect",
            headers=self.headers,
            json={"konnect_id": made.json()["konnect_id"], "canvas_name": True, "canvas_json": canvas},
        )
        assert reply.status_code == 422, reply.text
        return str(reply.json()["message"])

    def logs(self, konnect_id: int) -> list[dict[str, Any]]:
        url = f"/api/v1/task_logs/logs?konnect_id={konnect_id}"
        return list(self.api.get(url, headers=self.headers).json()["task_logs"])

    def one_log(self, konnect_id: int, timeout: float = 60) -> dict[str, Any]:
        (log,) = wait_until(lambda: self.logs(konnect_id), timeout=timeout, what=f"the task log of flow {konnect_id}")
        return dict(log)

    def tasks(self, log_id: int) -> dict[str, dict[str, Any]]:
        tasks = self.api.get(f"/api/v1/task_logs/{log_id}/tasks", headers=self.headers).json()["tasks"]
        return {t["step_id"]: t for t in tasks}


def post(hook: str, payload: dict[str, Any]) -> None:
    wait_until(lambda: httpx.post(hook, json=payload).json().get("status") == "accepted", what="accepted")


def test_calling_flows_through_real_processes() -> None:
    Other.calls = []
    server = LocalServer(Other, request_queue_size=64)
    try:
        with running_platform("konnectz-callflow-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            ada = Account(api, "ada-calls@example.com")
            answer = ada.publish(callee_canvas("Answer", server.url, "answer"))["konnect_id"]
            lookup = ada.publish(callee_canvas("Look up", server.url, "lookup"))["konnect_id"]
            broken = ada.publish(callee_canvas("Broken", server.url, "broken"))["konnect_id"]

            # The flow picker lists the account's flow-call flows with their inputs.
            listed = api.get("/api/v1/konnects/callable", headers=ada.headers).json()["flows"]
            assert [f["name"] for f in listed] == ["Answer", "Look up", "Broken"]
            assert [i["key"] for i in listed[0]["inputs"]] == ["email", "n"]

            _waits_for_a_respond_result(ada, server.url, answer)
            _waits_for_the_last_steps_output(ada, server.url, lookup)
            _goes_on_at_once(ada, server.url, lookup)
            _called_run_fails(ada, server.url, broken)
            _bad_inputs_fail_the_step(ada, server.url, answer)
            _refused_at_publish(ada, api, server.url, answer)
            asyncio.run(_other_account_refused_on_nats(platform, api, answer))
    finally:
        server.stop()


def _waits_for_a_respond_result(ada: Account, url: str, answer: int) -> None:
    caller = ada.publish(caller_canvas("Ask Answer", url, answer))
    post(caller["webhook_url"], {"email": "ada@example.com", "n": 3})
    log = ada.one_log(caller["konnect_id"])
    assert log["status"] == "SUCCESS", log
    step = ada.tasks(log["id"])["node-2"]["data"]
    output = step["output"]
    assert output["result"] == {"answer": "ada@example.com", "n": 3}  # the Respond body, parsed
    assert output["status"] == "SUCCESS" and output["flow_id"] == answer and output["flow_name"] == "Answer"
    assert "resumed by the end of the called run" in step["wait_reason"]
    assert calls_to("/after")[-1]["got"]["result"] == {"answer": "ada@example.com", "n": 3}
    # Links both ways: the caller's log names the called run, the called run's log its caller.
    called = ada.one_log(answer)
    assert log["calls"] == [{"step_id": "node-2", "run_id": called["run_id"], "flow_id": answer, "flow_name": "Answer"}]
    assert output["run_id"] == called["run_id"]
    assert called["called_by"] == {
        "konnect_id": caller["konnect_id"],
        "konnect_name": "Ask Answer",
        "run_id": log["run_id"],
        "step_id": "node-2",
    }
    assert called["status"] == "SUCCESS"


def _waits_for_the_last_steps_output(ada: Account, url: str, lookup: int) -> None:
    caller = ada.publish(caller_canvas("Ask Look up", url, lookup))
    post(caller["webhook_url"], {"email": "bob@example.com", "n": 4})
    log = ada.one_log(caller["konnect_id"])
    assert log["status"] == "SUCCESS", log
    result = ada.tasks(log["id"])["node-2"]["data"]["output"]["result"]
    assert result["status"] == 200 and result["body"] == {"customer": "C-bob@example.com", "path": "/lookup"}
    assert [b["email"] for b in calls_to("/lookup")] == ["bob@example.com"]  # the called flow ran once


def _goes_on_at_once(ada: Account, url: str, lookup: int) -> None:
    caller = ada.publish(caller_canvas("Fire and forget", url, lookup, "go_on"))
    post(caller["webhook_url"], {"email": "cy@example.com", "n": 5})
    log = ada.one_log(caller["konnect_id"])
    assert log["status"] == "SUCCESS", log
    output = ada.tasks(log["id"])["node-2"]["data"]["output"]
    assert set(output) == {"run_id", "flow_id", "flow_name"} and output["flow_id"] == lookup
    called = wait_until(
        lambda: next((g for g in ada.logs(lookup) if g["run_id"] == output["run_id"]), None), what="the called run"
    )
    assert called["status"] == "SUCCESS" and called["called_by"]["run_id"] == log["run_id"]
    assert "cy@example.com" in [b["email"] for b in calls_to("/lookup")]


def _called_run_fails(ada: Account, url: str, broken: int) -> None:
    caller = ada.publish(caller_canvas("Ask Broken", url, broken))
    post(caller["webhook_url"], {"email": "dee@example.com", "n": 6})
    log = ada.one_log(caller["konnect_id"])
    assert log["status"] == "ERROR", log
    step = ada.tasks(log["id"])["node-2"]
    assert step["status"] == "ERROR"
    assert "The called flow Broken" in step["data"]["error"] and "ended ERROR" in step["data"]["error"]
    assert "500" in step["data"]["error"]  # the called run's own error
    assert all(b["n"] != 6 for b in calls_to("/after"))  # the caller stopped there

    # On error: continue — the caller goes on with the error as the step's output.
    going = ada.publish(caller_canvas("Ask Broken, go on", url, broken, on_error={"continueOnError": True}))
    post(going["webhook_url"], {"email": "eve@example.com", "n": 7})
    log = ada.one_log(going["konnect_id"])
    assert log["status"] == "SUCCESS", log
    step = ada.tasks(log["id"])["node-2"]["data"]
    assert step["continued"] is True and "ended ERROR" in step["output"]["error"]["message"]
    assert [b["n"] for b in calls_to("/after") if b["n"] == 7] == [7]


def _bad_inputs_fail_the_step(ada: Account, url: str, answer: int) -> None:
    caller = ada.publish(caller_canvas("Bad inputs", url, answer, inputs={"n": "not a number"}))
    post(caller["webhook_url"], {"email": "x@example.com", "n": 8})
    log = ada.one_log(caller["konnect_id"])
    assert log["status"] == "ERROR"
    error = ada.tasks(log["id"])["node-2"]["data"]["error"]
    assert "were refused (no run started)" in error and "email: This field is required" in error, error


def _refused_at_publish(ada: Account, api: httpx.Client, url: str, answer: int) -> None:
    # A cycle: A calls B; publishing B to call A is refused, naming both.
    a = ada.publish(chain_callee("Cycle A", None))["konnect_id"]
    b = ada.publish(chain_callee("Cycle B", a))["konnect_id"]
    cycle = chain_callee("Cycle A", b)
    made = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=ada.headers,
        json={"konnect_id": a, "canvas_name": True, "canvas_json": cycle},
    )
    assert made.status_code == 422, made.text
    message = made.json()["message"]
    assert "cycle" in message and "'Cycle A' → 'Cycle B' → 'Cycle A'" in message, message
    itself = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=ada.headers,
        json={"konnect_id": a, "canvas_name": True, "canvas_json": chain_callee("Cycle A", a)},
    )
    assert itself.status_code == 422 and "cannot call itself" in itself.json()["message"]

    # Depth: a chain of 5 calls publishes; a 6th level is refused.
    below: int | None = None
    for level in range(6):  # Level 5 (a leaf) ... Level 0, which calls Level 1: 5 calls
        below = ada.publish(chain_callee(f"Level {5 - level}", below))["konnect_id"]
    message = ada.refused(caller_canvas("Too deep", url, below))
    assert "6 levels deep" in message and "the limit is 5" in message and "'Too deep' → 'Level 0'" in message

    # Not published, not a flow-call flow, missing.
    draft = api.post(
        "/api/v1/konnects/test_and_review",
        headers=ada.headers,
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": chain_callee("Draft", None)},
    ).json()["konnect_id"]
    assert "is not published" in ada.refused(caller_canvas("Calls a draft", url, draft))
    hooked = ada.publish(caller_canvas("A webhook flow", url, answer))["konnect_id"]
    message = ada.refused(caller_canvas("Calls a webhook flow", url, hooked))
    assert "does not start with the 'Called by a flow or AI tool' trigger" in message
    assert "does not exist or is not yours" in ada.refused(caller_canvas("Calls nothing", url, 987654))

    # Another account's flow: refused exactly like a missing one.
    bob = Account(api, "bob-calls@example.com")
    assert "does not exist or is not yours" in bob.refused(caller_canvas("Borrow Ada's", url, answer))
    assert bob.api.get("/api/v1/konnects/callable", headers=bob.headers).json()["flows"] == []


async def _other_account_refused_on_nats(platform: Any, api: httpx.Client, answer: int) -> None:
    """A runner asking (as the runner user) to start Ada's flow for a flow of another account: refused, nothing runs."""
    mallory = Account(api, "mallory-calls@example.com")
    own = mallory.publish(callee_canvas("Mallory's", "http://127.0.0.1:9", "answer"))["konnect_id"]
    nc = await nats.connect(platform.nats.url, **connect_options(RUNNER, platform.nats.passwords[RUNNER]))
    try:
        caller = CallerLink(konnect_id=own, run_id="r" * 32, step_id="node-2", depth=1)
        asked = CallStart(run_id="m" * 32, flow_id=answer, arguments={"email": "m@example.com"}, caller=caller)
        reply = CallStarted.model_validate_json(
            (await nc.request(CALL_SUBJECT, asked.model_dump_json().encode(), 10)).data
        )
        assert reply.status == 404 and reply.run_id is None and "does not exist or is not yours" in (reply.error or "")
        deep = asked.model_copy(update={"flow_id": own, "caller": caller.model_copy(update={"depth": 6})})
        reply = CallStarted.model_validate_json(
            (await nc.request(CALL_SUBJECT, deep.model_dump_json().encode(), 10)).data
        )
        assert reply.status == 422 and "the limit is 5" in (reply.error or "")
        garbage = CallStarted.model_validate_json((await nc.request(CALL_SUBJECT, b'{"flow_id": "x"}', 10)).data)
        assert garbage.status == 400 and "Invalid request" in (garbage.error or "")
    finally:
        await nc.close()
    assert not any(g["run_id"] == "m" * 32 for g in mallory.logs(own))


def healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_caller_waiting_through_a_runner_kill_resumes_exactly_once() -> None:
    """The called flow waits for a call (its step before the wait sends the resume URL); the caller waits
    for it. The runner is SIGKILLed and brought back; then the called run is resumed: the caller is
    resumed once, with the called run's Respond body, and its step after the call runs once."""
    Other.calls = []
    server = LocalServer(Other, request_queue_size=64)
    state = Path(tempfile.mkdtemp(prefix="konnectz-callflow-faults-"))
    state.chmod(0o755)
    platform = make_platform(state)
    platform.start()
    supervisor = platform.supervisor(prefix="callflow-faults")
    supervisor.start()
    try:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        ada = Account(api, "ada-faults@example.com")
        wait_config = [{"config_key": "timeout", "value": "1"}, {"config_key": "timeout_unit", "value": "hours"}]
        sent = [{"key": "n", "value": "{{node-1.n}}"}, {"key": "url", "value": "{{node-3.resume_url}}"}]
        callee = spaced(
            [
                trigger(),
                api_call_node(server.url + "/before", node_id="node-2", body=sent),
                canvas_node("node-3", "ActionNode", "wait", 3, "Wait", configResponses=wait_config),
                respond_node("node-4", 4, '{"approved": "{{node-3.answer}}", "n": {{node-1.n}}}'),
            ],
            "Slow answer",
        )
        slow = ada.publish(callee)["konnect_id"]
        caller = ada.publish(caller_canvas("Waits through a kill", server.url, slow))
        post(caller["webhook_url"], {"email": "k@example.com", "n": 42})
        url = wait_until(lambda: next((b["url"] for b in calls_to("/before")), None), what="the called run at its wait")
        active = f"/api/v1/konnects/{caller['konnect_id']}/runs/active"
        entry = wait_until(
            lambda: next(
                (r for r in api.get(active, headers=ada.headers).json()["runs"] if r["status"] == "WAITING"), None
            ),
            what="the caller WAITING",
        )
        assert entry["step_id"] == "node-2" and "of the flow Slow answer" in entry["waiting_for"]

        proc = platform.proc("runner")
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        wait_until(lambda: healthy(f"{platform.runner_url}/healthz"), timeout=120, what="the runner back")
        wait_until(lambda: httpx.get(url, timeout=5).status_code == 200, timeout=60, what="the resume link answers")
        assert httpx.post(url, json={"answer": "yes"}, timeout=30).status_code == 200

        log = ada.one_log(caller["konnect_id"], timeout=90)
        assert log["status"] == "SUCCESS", log
        output = ada.tasks(log["id"])["node-2"]["data"]["output"]
        assert output["result"] == {"approved": "yes", "n": 42}
        wait_until(lambda: calls_to("/after"), what="the caller's step after the call")
        assert [b["n"] for b in calls_to("/after")] == [42]  # resumed once
        assert [b["n"] for b in calls_to("/before")] == [42]  # the called run's first step ran once
        assert len(ada.logs(caller["konnect_id"])) == 1 and len(ada.logs(slow)) == 1
    finally:
        supervisor.stop()
        platform.stop()
        server.stop()
        shutil.rmtree(state, ignore_errors=True)
