"""Run control through real processes (api + a runner of two processes + PostgreSQL + NATS):
a flow's concurrency limit holds across the runner's processes, and failure alerts are digested."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import publish_canvas, sign_up, wait_until, webhook_canvas

pytestmark = pytest.mark.integration


class Service:
    """A local fake: POST /slow takes 0.3 s and records how many requests it had at once; /fail
    answers 500; /alert records what the alert flow sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.slow: list[Any] = []
        self.alerts: list[Any] = []
        self.failures = 0
        service = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.path == "/slow":
                    with service.lock:
                        service.now += 1
                        service.most = max(service.most, service.now)
                    time.sleep(0.3)
                    with service.lock:
                        service.now -= 1
                        service.slow.append(body)
                    self._reply(200, {"ok": True})
                elif self.path == "/fail":
                    with service.lock:
                        service.failures += 1
                    self._reply(500, {"error": "the service is down"})
                elif self.path == "/alert":
                    with service.lock:
                        service.alerts.append(body)
                    self._reply(200, {"ok": True})
                else:
                    self._reply(404, {"error": "no route"})

        self.server = LocalServer(Handler, request_queue_size=64)


@pytest.fixture(scope="module")
def platform() -> Iterator[Any]:
    with running_platform("konnectz-runctl-", KONNECTZ_RUNNER_PROCESSES="2") as plat:
        yield plat


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    fake = Service()
    yield fake
    fake.server.stop()


def _logs(api: httpx.Client, headers: dict[str, str], konnect_id: int) -> list[dict[str, Any]]:
    reply = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}&page_size=100", headers=headers)
    return list(reply.json()["task_logs"])


def test_one_run_at_a_time_across_two_runner_processes_none_lost(platform, service: Service) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    headers = sign_up(api, "limit@example.com", "correct horse battery")
    canvas = webhook_canvas(f"{service.server.url}/slow", body=[{"key": "n", "value": "{{node-1.n}}"}])
    canvas["runControl"] = {"maxConcurrency": 1}
    published = publish_canvas(api, headers, canvas)
    konnect_id, hook = published["konnect_id"], published["webhook_url"]
    wait_until(lambda: httpx.head(hook).status_code == 200, what="the webhook is live")

    def post(n: int) -> str:
        reply = httpx.post(hook, json={"n": n}, timeout=30)  # a new connection each: both processes take some
        assert reply.status_code == 200, reply.text
        return str(reply.json()["run_id"])

    with ThreadPoolExecutor(20) as pool:
        run_ids = set(pool.map(post, range(20)))
    assert len(run_ids) == 20
    logs = wait_until(lambda: got if len(got := _logs(api, headers, konnect_id)) >= 20 else None, timeout=90)
    assert {log["run_id"] for log in logs} == run_ids
    assert {log["status"] for log in logs} == {"SUCCESS"}
    assert service.most == 1, f"the service saw {service.most} requests at once"
    assert len(service.slow) == 20


def test_five_failures_send_one_alert_mail_and_run_the_alert_flow_once(platform, service: Service) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    email = "alerts@example.com"
    headers = sign_up(api, email, "correct horse battery")
    body = [
        {"key": "run", "value": "{{node-1.failure.run_id}}"},
        {"key": "error", "value": "{{node-1.failure.error}}"},
        {"key": "step", "value": "{{node-1.failure.step_id}}"},
        {"key": "konnect", "value": "{{node-1.failure.konnect_id}}"},
    ]
    alert_flow = publish_canvas(
        api, headers, webhook_canvas(f"{service.server.url}/alert", name="On failure", body=body)
    )
    canvas = webhook_canvas(f"{service.server.url}/fail", name="Breaks", body=[{"key": "n", "value": "{{node-1.n}}"}])
    canvas["runControl"] = {"alert": {"email": True, "runKonnectId": alert_flow["konnect_id"], "digestMinutes": 60}}
    published = publish_canvas(api, headers, canvas)
    konnect_id, hook = published["konnect_id"], published["webhook_url"]
    wait_until(lambda: httpx.head(hook).status_code == 200, what="the webhook is live")
    for n in range(5):
        assert httpx.post(hook, json={"n": n}).status_code == 200
        wait_until(lambda n=n: len(_logs(api, headers, konnect_id)) > n, timeout=60)
    logs = _logs(api, headers, konnect_id)
    assert [log["status"] for log in logs] == ["ERROR"] * 5
    (alert,) = wait_until(lambda: list(service.alerts), timeout=60, what="the alert flow ran")
    time.sleep(2)  # nothing more comes
    assert len(service.alerts) == 1
    sent = httpx.Response(200, content=alert).json()
    first = min(logs, key=lambda log: log["id"])
    assert sent["run"] == first["run_id"] and sent["step"] == "node-2" and sent["konnect"] == konnect_id
    assert "500" in sent["error"]

    def alert_mails() -> list[dict[str, Any]]:
        return [m for m in api.get("/dev/mail.json").json() if m["to"] == email and "failed" in m["subject"]]

    (mail,) = wait_until(alert_mails, what="the alert mail")
    assert mail["subject"] == "Konnectz: Breaks failed"
    assert first["run_id"] in mail["text"] and "Step:" in mail["text"]
    assert len(alert_mails()) == 1  # the four later failures wait for the digest
    alert_logs = wait_until(lambda: _logs(api, headers, alert_flow["konnect_id"]))
    assert [log["status"] for log in alert_logs] == ["SUCCESS"]
