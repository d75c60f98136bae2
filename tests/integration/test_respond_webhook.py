"""Respond to the webhook (issue 37, item 2; docs/webhook-response.md) through real processes.

api + runner + PostgreSQL + NATS: flows published through the api answer their webhook's caller at
once (as before), when the run ends, or from a Respond step (templated status, headers and body, in the
task log); past the Webhook's timeout or in a Delay the caller gets 202 with the run id; a body over the
limit is a 502 for the caller and an ERROR run saying so; a Respond step without a Webhook answering by
it is refused at publish with the reason. The runner runs two processes on one port: each request is
answered with its own data, whichever process's worker ran it.
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_contracts.limits import RESPONSE_MAX_BYTES
from konnectz_contracts.steps.respond import NEEDS_WEBHOOK, NO_RESPOND_STEP
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import api_call_node, canvas_node, chain_canvas, publish_konnect, review_node, wait_until
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration

ORDER = {"order": {"id": 77}, "customer": "Ada"}


class _Slow(JsonHandler):
    calls: ClassVar[int] = 0

    def do_POST(self) -> None:
        _Slow.calls += 1
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(2.5)
        self._reply(200, {"ok": True})

    def do_GET(self) -> None:
        self._reply(200, {"fast": True})


class _Links(JsonHandler):
    """Records what the step before a Wait for a call sends: its resume URL."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        _Links.bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}"))
        self._reply(200, {"ok": True})


def wait_flow(url: str, name: str, timeout: int) -> dict[str, Any]:
    """Webhook (answered by a step) -> API call handing out the resume URL -> Wait for a call -> Respond."""
    link = api_call_node(
        url,
        node_id="node-2",
        body=[{"key": "order", "value": "{{node-1.customer}}"}, {"key": "url", "value": "{{node-3.resume_url}}"}],
    )
    wait = canvas_node(
        "node-3",
        "InHouse",
        "wait",
        3,
        "Wait",
        selectedAddonsValue={"timeout": 1, "timeout_unit": "hours", "on_timeout": "continue"},
    )
    link["position"]["x"], wait["position"]["x"] = 600, 1200
    return chain_canvas(
        [webhook("step", timeout), link, wait, respond_node("node-4", 4, body="Answer: {{node-3.answer}}")], name
    )


def webhook(respond: str = "at_once", timeout: int = 30) -> dict[str, Any]:
    values = {"respond": respond, "respond_timeout_seconds": timeout}
    return canvas_node(
        "node-1",
        "WebhookInner",
        "webhook",
        1,
        "Webhook",
        selectedEvent={"id": "catch_hook", "name": "Catch Webhook"},
        selectedAddonsValue=values,
    )


def respond_node(node_id: str, index: int, **fields: str) -> dict[str, Any]:
    responses = [{"config_key": key, "value": value} for key, value in fields.items()]
    node = canvas_node(node_id, "ActionNode", "respond", index, "Respond", configResponses=responses)
    node["position"]["x"] = 600 * index
    return node


def delay_node(node_id: str, index: int) -> dict[str, Any]:
    timer = {"delay_type": 515, "delay_unit": 322, "delay_value": 1}
    return canvas_node(node_id, "InHouse", "delay", index, "Delay", timerConfigs=timer)


class Flows:
    def __init__(self, api: httpx.Client, headers: dict[str, str]) -> None:
        self.api, self.headers = api, headers

    def draft(self, canvas: dict[str, Any]) -> tuple[int, str]:
        trigger = review_node(self.api, self.headers, canvas, "node-1", None)
        return trigger["konnect_id"], trigger["webhook_url"]

    def publish(self, canvas: dict[str, Any]) -> tuple[int, str]:
        konnect_id, hook = self.draft(canvas)
        publish_konnect(self.api, self.headers, konnect_id, canvas)
        return konnect_id, hook

    def refused(self, canvas: dict[str, Any]) -> str:
        konnect_id, _hook = self.draft(canvas)
        r = self.api.post(
            "/api/v1/konnects/publish_konnect",
            headers=self.headers,
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        )
        assert r.status_code >= 400, r.text
        return r.text

    def tasks(self, konnect_id: int, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        def log() -> Any:
            logs = self.api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=self.headers).json()
            return next((x for x in logs["task_logs"] if x.get("run_id") == run_id), None)

        found = wait_until(log, timeout=30, what=f"the task log of run {run_id}")
        tasks = self.api.get(f"/api/v1/task_logs/{found['id']}/tasks", headers=self.headers).json()["tasks"]
        return found, tasks


def post(hook: str, payload: dict[str, Any], timeout: float = 60) -> httpx.Response:
    """The first answer that is not the 404 of a konnect the runner has not loaded yet."""

    def answered() -> httpx.Response | None:
        reply = httpx.post(hook, json=payload, timeout=timeout)
        return None if reply.status_code == 404 else reply

    reply: httpx.Response = wait_until(answered, timeout=30, what="the runner to load the flow")
    return reply


def test_webhooks_answered_at_once_when_done_by_a_step_or_202() -> None:
    _Slow.calls = 0
    slow = LocalServer(_Slow)
    try:
        with running_platform(
            "konnectz-respond-", KONNECTZ_ALLOW_PRIVATE_NETWORKS="127.0.0.0/8", KONNECTZ_RUNNER_PROCESSES="2"
        ) as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            flows = Flows(api, sign_up_and_in(api, "respond@example.com", "correct horse battery"))
            add_ons = api.get("/api/v1/apps/add_on_apps", headers=flows.headers).json()["apps"]
            listed = next(app for app in add_ons if app["provider"] == "respond")
            assert {"name": "Respond to Webhook", "app_type": "ADD_ON"}.items() <= listed.items()

            # a Respond step: templated status, headers and body; the task log shows what was sent
            step = chain_canvas(
                [
                    webhook("step"),
                    respond_node(
                        "node-2",
                        2,
                        status="201",
                        headers="X-Order: {{node-1.order.id}}",
                        body='{"thanks": "{{node-1.customer}}"}',
                    ),
                ],
                "Answer by a step",
            )
            konnect_id, hook = flows.publish(step)
            reply = post(hook, ORDER)
            assert reply.status_code == 201, reply.text
            assert reply.json() == {"thanks": "Ada"} and reply.headers["x-order"] == "77"
            assert reply.headers["content-type"] == "application/json"
            assert reply.headers["content-security-policy"] == "sandbox"
            run_id = reply.headers.get("konnectz-run-id")
            assert run_id is not None
            log, (task,) = flows.tasks(konnect_id, run_id)
            assert log["status"] == "SUCCESS"
            sent = task["data"]["output"]
            assert (sent["sent"], sent["status"], sent["body"]) == (True, 201, '{"thanks": "Ada"}')
            # at once, from both processes: each caller gets its own answer
            names = [f"caller-{i}" for i in range(24)]
            answers = asyncio.run(post_all(hook, [{**ORDER, "customer": name} for name in names]))
            assert [(a.status_code, a.json()) for a in answers] == [(201, {"thanks": name}) for name in names]

            # when the run ends: the last step's output; at once: the run id, as before
            done = chain_canvas([webhook("when_done"), respond_free_api_call(slow.url, fast=True)], "When done")
            _id, done_hook = flows.publish(done)
            answered = post(done_hook, ORDER)
            assert answered.status_code == 200 and answered.json()["status"] == 200
            at_once = chain_canvas([webhook(), respond_free_api_call(slow.url, fast=True)], "At once")
            _id, at_once_hook = flows.publish(at_once)
            first = post(at_once_hook, ORDER)
            assert first.status_code == 200 and set(first.json()) == {"status", "run_id"}

            # past the timeout (a 2.5 s call, 1 s to wait): 202 with the run id; the late answer is not sent
            late = chain_canvas(
                [webhook("step", 1), respond_free_api_call(slow.url), respond_node("node-3", 3, body="late")],
                "Late",
            )
            late_id, late_hook = flows.publish(late)
            started = time.monotonic()
            timed_out = post(late_hook, ORDER)
            assert timed_out.status_code == 202 and timed_out.json()["status"] == "accepted"
            assert time.monotonic() - started < 2.4
            _log, tasks = flows.tasks(late_id, timed_out.json()["run_id"])
            assert tasks[-1]["data"]["output"]["sent"] is False
            assert "already been answered 202" in tasks[-1]["data"]["output"]["not_sent"]

            # a Delay: 202 with the run id at once
            waits = chain_canvas([webhook("step"), delay_node("node-2", 2), respond_node("node-3", 3)], "Waits")
            _id, waits_hook = flows.publish(waits)
            started = time.monotonic()
            waiting = post(waits_hook, ORDER)
            assert waiting.status_code == 202 and len(waiting.json()["run_id"]) == 32
            assert time.monotonic() - started < 10

            # a Wait for a call decided within the Webhook's timeout: the caller, still held, gets the
            # Respond step's answer (docs/webhook-response.md); decided after it, 202 at the timeout
            _Links.bodies = []
            links = LocalServer(_Links)
            try:
                _id, held_hook = flows.publish(wait_flow(links.url, "Held", 30))
                with ThreadPoolExecutor(1) as pool:
                    caller = pool.submit(post, held_hook, ORDER)
                    (sent,) = wait_until(lambda: [b for b in _Links.bodies if b["order"] == "Ada"], timeout=30)
                    assert not caller.done()  # held while the run waits
                    assert httpx.post(sent["url"], json={"answer": "yes"}, timeout=30).status_code == 200
                    held = caller.result(timeout=30)
                assert held.status_code == 200 and held.text == "Answer: yes", held.text

                late_id, late_hook = flows.publish(wait_flow(links.url, "Held too long", 2))
                started = time.monotonic()
                accepted = post(late_hook, {**ORDER, "customer": "Grace"})
                assert accepted.status_code == 202 and 1.5 < time.monotonic() - started < 10
                (sent,) = [b for b in _Links.bodies if b["order"] == "Grace"]
                assert httpx.post(sent["url"], json={"answer": "late"}, timeout=30).status_code == 200
                _log, tasks = flows.tasks(late_id, accepted.json()["run_id"])
                assert (
                    tasks[-1]["data"]["output"]["sent"] is False
                    and tasks[-1]["data"]["output"]["body"] == "Answer: late"
                )
            finally:
                links.stop()

            # a body over the limit: 502 for the caller, the run an ERROR saying so
            half = "x" * (RESPONSE_MAX_BYTES // 2 + 10)
            big = chain_canvas([webhook("step"), respond_node("node-2", 2, body="{{node-1.a}}{{node-1.a}}")], "Big")
            big_id, big_hook = flows.publish(big)
            too_big = post(big_hook, {"a": half})
            assert too_big.status_code == 502
            reason = (
                f"The response body is {2 * len(half)} bytes; a webhook's answer may be at most {RESPONSE_MAX_BYTES}"
            )
            assert too_big.json()["message"].startswith(reason)
            log, (task,) = flows.tasks(big_id, too_big.json()["run_id"])
            assert log["status"] == "ERROR" and task["status"] == "ERROR" and task["data"]["error"].startswith(reason)

            # refused at publish: a Respond step without a Webhook answering by it, and the reverse
            wrong = chain_canvas([webhook("at_once"), respond_node("node-2", 2, body="x")], "Wrong")
            assert NEEDS_WEBHOOK in json.loads(flows.refused(wrong))["message"]
            none = chain_canvas([webhook("step"), respond_free_api_call(slow.url, fast=True)], "No respond")
            assert NO_RESPOND_STEP.split(":")[0] in flows.refused(none)
    finally:
        slow.stop()


async def post_all(hook: str, payloads: list[dict[str, Any]]) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=60) as http:
        return list(await asyncio.gather(*(http.post(hook, json=p) for p in payloads)))


def respond_free_api_call(url: str, *, fast: bool = False) -> dict[str, Any]:
    """An API call as node-2: a GET answered at once when ``fast``, else a POST that takes 2.5 s."""
    node = api_call_node(
        url + ("/fast" if fast else "/slow"),
        node_id="node-2",
        method="GET" if fast else "POST",
        body=[] if fast else [{"key": "n", "value": "1"}],
    )
    node["position"]["x"] = 1200
    return node
