"""Error flows end to end (issue 37, item 1): a flow with the "When a flow fails" trigger runs once for
every failed run of the account's other flows, on real processes (api + runner + PostgreSQL + NATS).

- A Webhook → API Call flow whose call answers 500 fails; the error flow (When a flow fails → API
  Call) posts the failure's flow, step, error and input to a local server, once.
- An error flow naming other flows is not started; a failed run of an error flow starts no error
  flow (no cascade); another account's failures never reach this account's error flow.
"""

from __future__ import annotations

import json
import time
from typing import Any, ClassVar

import httpx
import pytest

from konnectz_contracts.triggers.flow_failed import error_run_id
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    api_call_node,
    canvas_node,
    chain_canvas,
    publish_canvas,
    sign_up,
    wait_until,
    webhook_node,
)

pytestmark = pytest.mark.integration


class _Server(JsonHandler):
    """/broken answers 500; /alerts and /other record what they were sent (200)."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Server.calls.append({"path": self.path, "body": body})
        self._reply(500 if self.path.startswith("/broken") else 200, {"ok": not self.path.startswith("/broken")})


def _failing(url: str, name: str, path: str = "/broken") -> dict[str, Any]:
    call = api_call_node(url + path, node_id="node-2", body=[{"key": "order", "value": "{{node-1.order}}"}])
    return chain_canvas([webhook_node(), call], name)


def _error_flow(url: str, name: str, path: str, flows: list[int] | None = None) -> dict[str, Any]:
    trigger = canvas_node(
        "node-1",
        "InHouse",
        "flow_failed",
        1,
        "When a flow fails",
        selectedEvent={"id": "flow_failed", "name": "Flow Failed"},
        selectedAddonsValue={"flows": flows or []},
    )
    report = api_call_node(
        url + path,
        node_id="node-2",
        body=[
            {"key": "flow", "value": "{{node-1.flow.name}}"},
            {"key": "step", "value": "{{node-1.step.id}}"},
            {"key": "error", "value": "{{node-1.error}}"},
            {"key": "order", "value": "{{node-1.input.order}}"},
            {"key": "run", "value": "{{node-1.run.id}}"},
        ],
    )
    return chain_canvas([trigger, report], name)


def _logs(api: httpx.Client, headers: dict[str, str], konnect_id: int) -> list[dict[str, Any]]:
    reply = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()
    return list(reply["task_logs"])


def test_an_error_flow_runs_once_for_each_failed_run_of_the_accounts_other_flows() -> None:
    _Server.calls = []
    server = LocalServer(_Server)
    try:
        with running_platform("konnectz-error-flow-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "errors@example.com", "correct horse battery")
            broken = publish_canvas(api, headers, _failing(server.url, "Orders to CRM"))
            fine = publish_canvas(api, headers, _failing(server.url, "Fine flow", "/other"))
            # Three error flows: every flow; only "Fine flow" (so not this failure); and one that fails itself.
            every = publish_canvas(api, headers, _error_flow(server.url, "Alerts", "/alerts"))
            only_fine = publish_canvas(
                api, headers, _error_flow(server.url, "Fine only", "/alerts-fine", [fine["konnect_id"]])
            )
            failing_alerts = publish_canvas(api, headers, _error_flow(server.url, "Broken alerts", "/broken-alerts"))
            # Another account's failing flow: its failures are not this account's.
            other = sign_up(api, "someone@example.com", "correct horse battery")
            stranger = publish_canvas(api, other, _failing(server.url, "Their flow"))

            hook = broken["webhook_url"]
            run_id = wait_until(lambda: httpx.post(hook, json={"order": "A-17"}).json().get("run_id"), what="accepted")
            wait_until(
                lambda: httpx.post(stranger["webhook_url"], json={"order": "X"}).json().get("run_id"), what="accepted"
            )

            (failed,) = wait_until(lambda: _logs(api, headers, broken["konnect_id"]), what="the failed run's log")
            assert failed["status"] == "ERROR"
            (alert,) = wait_until(lambda: _logs(api, headers, every["konnect_id"]), what="the error flow's run")
            assert alert["status"] == "SUCCESS" and alert["run_id"] == error_run_id(run_id, every["konnect_id"])
            sent = [c for c in _Server.calls if c["path"] == "/alerts"]
            assert len(sent) == 1
            assert sent[0]["body"]["flow"] == "Orders to CRM"
            assert sent[0]["body"]["step"] == "node-2"
            assert sent[0]["body"]["error"].startswith("HTTP 500 from")
            assert sent[0]["body"]["order"] == "A-17"
            assert sent[0]["body"]["run"] == run_id
            # The error flow that fails itself ran (and failed) once, and started no error flow in turn.
            (own,) = wait_until(
                lambda: _logs(api, headers, failing_alerts["konnect_id"]), what="the failing error flow"
            )
            assert own["status"] == "ERROR"
            time.sleep(3)  # anything that would follow has had time to
            assert len([c for c in _Server.calls if c["path"] == "/alerts"]) == 1  # not for the error flow's failure
            assert len([c for c in _Server.calls if c["path"] == "/broken-alerts"]) == 1
            assert _logs(api, headers, only_fine["konnect_id"]) == []  # names another flow
            assert [c["body"]["order"] for c in _Server.calls if c["path"] == "/alerts"] == [
                "A-17"
            ]  # not the stranger's
            assert _logs(api, headers, fine["konnect_id"]) == []
    finally:
        server.stop()
