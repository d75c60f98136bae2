"""A step's error policy end to end (issue 37, item 1): a flow published with a card's Retry and
Continue on error, run by real processes (api + runner + PostgreSQL + NATS) against a local server
that fails as told. The task log shows each failed attempt; every attempt carried one
Idempotency-Key; a step that still failed lets the run go on with its error as its output."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    api_call_node,
    chain_canvas,
    publish_canvas,
    sign_up,
    wait_until,
    webhook_node,
)

pytestmark = pytest.mark.integration


class _Flaky(JsonHandler):
    """/flaky answers 503 to its first two calls, then 200; /report records what it was sent."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Flaky.calls.append({"path": self.path, "key": self.headers.get("Idempotency-Key"), "body": body})
        if self.path == "/flaky" and sum(c["path"] == "/flaky" for c in _Flaky.calls) <= 2:
            self._reply(503, {"message": "busy"}, {"Retry-After": "1"})
        elif self.path == "/gone":
            self._reply(404, {"message": "no such order"})
        else:
            self._reply(200, {"ok": True})


def _flow(url: str) -> dict[str, Any]:
    flaky = api_call_node(url + "/flaky", node_id="node-2", body=[{"key": "n", "value": "{{node-1.n}}"}])
    flaky["data"]["onError"] = {"retries": 3, "backoff": "exponential", "delaySeconds": 0.2, "retryOn": ["server"]}
    gone = api_call_node(url + "/gone", node_id="node-3", body=[{"key": "n", "value": "{{node-1.n}}"}])
    gone["data"]["onError"] = {"continueOnError": True}
    report = api_call_node(
        url + "/report",
        node_id="node-4",
        body=[{"key": "status", "value": "{{node-3.error.status}}"}, {"key": "ok", "value": "{{node-2.body.ok}}"}],
    )
    apps = [webhook_node(), flaky, gone, report]
    for x, app in enumerate(apps):
        app["position"]["x"] = 600 * x
    return chain_canvas(apps, "Retry and go on")


def test_a_published_flow_retries_its_step_and_goes_on_after_an_error() -> None:
    _Flaky.calls = []
    server = LocalServer(_Flaky)
    try:
        with running_platform("konnectz-on-error-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "retry@example.com", "correct horse battery")
            published = publish_canvas(api, headers, _flow(server.url))
            konnect_id, hook = published["konnect_id"], published["webhook_url"]
            wait_until(lambda: httpx.post(hook, json={"n": 7}).json().get("status") == "accepted", what="accepted")

            def logs() -> list[dict[str, Any]]:
                return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

            (log,) = wait_until(logs, what="the run's task log")
            assert log["status"] == "SUCCESS"
            tasks = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
            flaky, gone, report = tasks
            assert flaky["status"] == "SUCCESS"
            retries = flaky["data"]["retries"]
            assert [(r["number"], r["failure"], r["status"]) for r in retries] == [
                (1, "server", 503),
                (2, "server", 503),
            ]
            assert [r["waited_seconds"] for r in retries] == [1.0, 1.0]  # Retry-After: 1 is longer than the backoff
            assert gone["status"] == "ERROR" and gone["data"]["continued"] is True
            assert gone["data"]["output"]["error"]["status"] == 404
            assert report["status"] == "SUCCESS"
            sent = [(c["path"], c["body"]) for c in _Flaky.calls]
            assert sent == [
                ("/flaky", {"n": 7}),
                ("/flaky", {"n": 7}),
                ("/flaky", {"n": 7}),
                ("/gone", {"n": 7}),
                ("/report", {"status": 404, "ok": True}),
            ]
            keys = {c["key"] for c in _Flaky.calls if c["path"] == "/flaky"}
            assert len(keys) == 1 and keys.pop().startswith("kz-")  # one key for the three attempts
            assert all(c["key"] is None for c in _Flaky.calls if c["path"] != "/flaky")  # no retries, no key
    finally:
        server.stop()
