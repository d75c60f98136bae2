"""Revisions through real processes (api + runner + PostgreSQL + NATS): each run's task log names the
revision of the flow that ran it, across two publishes and a restore.

Webhook -> Hash: revision 1 hashes the e-mail, revision 2 "v2-" and the e-mail; restoring revision 1
publishes it as revision 3, whose runs hash the e-mail again.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import canvas_node, chain_canvas, wait_until
from konnectz_devstack.testing import sign_up as sign_up_and_in

pytestmark = pytest.mark.integration


def hash_canvas(text: str) -> dict[str, Any]:
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook"),
        canvas_node("node-2", "ActionNode", "hash", 2, "Hash", configResponses=[{"config_key": "text", "value": text}]),
    ]
    return chain_canvas(apps, "Hash with revisions")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_task_log_names_the_revision_that_ran() -> None:
    with running_platform("konnectz-revisions-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_up_and_in(api, "revisions@example.com", "correct horse battery")
        first = hash_canvas("{{node-1.email}}")
        r = api.post(
            "/api/v1/konnects/test_and_review",
            json={"node_id": "node-1", "konnect_id": None, "canvas_json": first},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        konnect_id, hook = r.json()["konnect_id"], r.json()["webhook_url"]

        def publish(canvas: dict[str, Any], message: str) -> int:
            body = {"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas, "message": message}
            r = api.post("/api/v1/konnects/publish_konnect", json=body, headers=headers)
            assert r.status_code == 200, r.text
            return int(r.json()["revision"])

        def run(revision: int) -> dict[str, Any]:
            """Post to the webhook until a run of ``revision`` is logged (the runners take a publish up
            within moments); that run's task log and the e-mail it was sent."""

            def once() -> tuple[dict[str, Any], str] | None:
                email = f"{uuid.uuid4().hex[:8]}@example.com"
                reply = httpx.post(hook, json={"email": email})
                if reply.status_code != 200 or reply.json().get("status") != "accepted":
                    return None
                run_id = reply.json()["run_id"]

                def logged() -> dict[str, Any] | None:
                    logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()
                    return next((log for log in logs["task_logs"] if log["run_id"] == run_id), None)

                log = wait_until(logged, timeout=30, what=f"the task log of run {run_id}")
                return (log, email) if log["revision"] == revision else None

            log, email = wait_until(once, timeout=60, interval=0.5, what=f"a run of revision {revision}")
            (task,) = api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
            return {"log": log, "email": email, "hash": task["data"]["output"]["hash"]}

        assert publish(first, "hash the e-mail") == 1
        one = run(1)
        assert one["log"]["status"] == "SUCCESS" and one["hash"] == _sha(one["email"])

        assert publish(hash_canvas("v2-{{node-1.email}}"), "prefix v2") == 2
        two = run(2)
        assert two["hash"] == _sha("v2-" + two["email"])

        r = api.post(f"/api/v1/konnects/{konnect_id}/revisions/1/restore", json={}, headers=headers)
        assert r.status_code == 200, r.text
        assert r.json()["revision"] == 3
        three = run(3)
        assert three["hash"] == _sha(three["email"])  # revision 1's behaviour

        listed = api.get(f"/api/v1/konnects/{konnect_id}/revisions", headers=headers).json()
        assert [(r["number"], r["restored_from"], r["live"]) for r in listed["revisions"]] == [
            (3, 1, True),
            (2, None, False),
            (1, None, False),
        ]
