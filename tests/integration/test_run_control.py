"""Run control through real processes (api + runner + PostgreSQL + NATS): a run waiting in a delay is
listed as active (WAITING), cancelled through the api, and ends at once as CANCELLED with who cancelled
it and the steps before the delay; its timer is gone, so the step after the delay never runs.

The deadline through real processes is in runner/tests/test_run_control_processes.py (a runner in
spec-file mode: the editor's flow settings, which compile ``run_control``, are another part of issue 25).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import nats
import pytest

from konnectz_contracts.events import STREAM_RUNS, SUBJECTS_TIMERS
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import delay_canvas, publish_canvas, sign_up, wait_until

pytestmark = pytest.mark.integration


class _Handler(JsonHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        _Handler.hits.append(self.path)
        self._reply(200, {"ok": True})


def timers_pending(nats_url: str) -> int:
    async def count() -> int:
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream().stream_info(STREAM_RUNS, subjects_filter=SUBJECTS_TIMERS)
            return sum((info.state.subjects or {}).values())
        finally:
            await nc.close()

    return asyncio.run(count())


def test_a_waiting_run_is_listed_cancelled_and_never_resumes() -> None:
    _Handler.hits = []
    server = LocalServer(_Handler)
    try:
        with running_platform("konnectz-cancel-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, "cancel@example.com", "correct horse battery")
            published = publish_canvas(api, headers, delay_canvas(server.url, "Remind in an hour"))
            konnect_id, hook = published["konnect_id"], published["webhook_url"]
            run_id = wait_until(lambda: httpx.post(hook, json={"n": 1}).json().get("run_id"), what="accepted")
            active = f"/api/v1/konnects/{konnect_id}/runs/active"

            def waiting() -> dict[str, Any] | None:
                runs = api.get(active, headers=headers).json()["runs"]
                return next((r for r in runs if r["run_id"] == run_id and r["status"] == "WAITING"), None)

            entry = wait_until(waiting, what="the run listed as WAITING")
            assert entry["step_id"] == "node-3" and entry["resume_at"] is not None
            assert _Handler.hits == ["/before"]
            assert timers_pending(platform.nats.admin_url) == 1

            # Someone else's account sees neither the run nor can cancel it.
            other = sign_up(api, "other@example.com", "correct horse battery")
            assert api.get(active, headers=other).status_code == 404
            cancel = f"/api/v1/konnects/{konnect_id}/runs/{run_id}/cancel"
            assert api.post(cancel, headers=other).status_code == 404
            unknown = api.post(f"/api/v1/konnects/{konnect_id}/runs/{'0' * 32}/cancel", headers=headers)
            assert unknown.status_code == 404 and "is not running" in unknown.json()["message"]
            assert api.post(f"/api/v1/konnects/{konnect_id}/runs/a.b/cancel", headers=headers).status_code == 422

            clock = time.monotonic()
            reply = api.post(cancel, headers=headers)
            assert reply.status_code == 202, reply.text
            assert reply.json()["status"] == "WAITING"

            def logs() -> list[dict[str, Any]]:
                return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

            (log,) = wait_until(logs, what="the cancelled run's task log")
            assert time.monotonic() - clock < 30  # now, not in an hour
            assert log["run_id"] == run_id
            assert log["status"] == "CANCELLED"
            assert log["cancelled_by"] == "cancel@example.com"
            tasks = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
            assert [t["step_id"] for t in tasks] == ["node-2", "node-3"]
            assert wait_until(lambda: api.get(active, headers=headers).json()["runs"] == [], what="no active run")
            assert timers_pending(platform.nats.admin_url) == 0  # the timer is gone: it never fires later

            # The status filter takes CANCELLED; a finished run cannot be cancelled again.
            only = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}&task_log_type=CANCELLED", headers=headers)
            assert [r["run_id"] for r in only.json()["task_logs"]] == [run_id]
            again = api.post(cancel, headers=headers)
            assert again.status_code == 409 and "finished already" in again.json()["message"]
            time.sleep(2.0)
            assert _Handler.hits == ["/before"]  # the step after the delay never ran
    finally:
        server.stop()
