"""The walking skeleton end to end through real processes: api + runner + PostgreSQL + NATS + SMTP.

Sign up, verify by the mailed link, sign in with a solved captcha, save and publish a
Webhook -> API call konnect, post to its webhook, see the API call arrive at a local HTTP
server with the reference resolved, and read the run back as a task log. Then restart the
platform and find everything still there and still running.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import sign_in, wait_until, webhook_canvas
from konnectz_devstack.testing import test_trigger as trigger_konnect_id

pytestmark = pytest.mark.integration


def canvas(endpoint: str) -> dict[str, Any]:
    return webhook_canvas(
        f"{endpoint}/orders",
        name="Orders to CRM",
        headers=[{"key": "X-Order", "value": "{{node-1.order.id}}"}],
        params=[{"key": "src", "value": "konnectz"}],
        body=[
            {"key": "customer.name", "value": "{{node-1.name}}"},
            {"key": "total", "value": "{{node-1.order.total}}"},
        ],
    )


def test_the_slice_survives_a_restart(receiver) -> None:
    with running_platform("konnectz-slice-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        email, password = "grace@example.com", "correct horse battery"
        assert api.post("/api/v1/users/user_exists", json={"email": email}).json()["key"] == "NO_USER"
        r = api.post(
            "/api/v1/signup",
            json={
                "email": email,
                "first_name": "Grace",
                "last_name": "Hopper",
                "password": password,
                "password_confirmation": password,
                "is_admin": False,
            },
        )
        assert r.status_code == 201, r.text
        mail = wait_until(lambda: [m for m in api.get("/dev/mail.json").json() if m["to"] == email])
        link = next(u for u in mail[0]["links"] if "/verify-email/" in u)
        assert link.startswith(platform.api_url)
        token = link.rsplit("/", 1)[1]
        assert (
            api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token}).json()["key"]
            == "VERIFY_EMAIL_SUCCESS"
        )
        headers = sign_in(api, email, password)

        konnect_id = trigger_konnect_id(api, headers, canvas(receiver.url))
        r = api.post(
            "/api/v1/konnects/publish_konnect",
            headers=headers,
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas(receiver.url)},
        )
        assert r.status_code == 200, r.text
        published = r.json()
        hook = published["webhook_url"]
        assert hook.startswith(platform.runner_url + "/hooks/")

        # The runner serves the new konnect without a restart.
        def post_hook() -> httpx.Response | None:
            resp = httpx.post(hook, json={"name": "Ada", "order": {"id": "A-1", "total": 12.5}}, timeout=10)
            return resp if resp.status_code == 200 else None

        accepted = wait_until(post_hook)
        assert accepted.json()["status"] == "accepted"
        wait_until(lambda: receiver.requests)
        sent = receiver.requests[0]
        assert sent["path"] == "/orders?src=konnectz"
        assert sent["headers"]["X-Order"] == "A-1"
        assert sent["body"] == {"customer": {"name": "Ada"}, "total": 12.5}

        def logs() -> list[dict[str, Any]]:
            return api.get(f"/api/v1/task_logs/logs?konnect_id={published['konnect_id']}", headers=headers).json()[
                "task_logs"
            ]

        task_logs = wait_until(logs)
        assert task_logs[0]["status"] == "SUCCESS"
        assert task_logs[0]["data"]["node-1"] == {"name": "Ada", "order": {"id": "A-1", "total": 12.5}}
        assert task_logs[0]["data"]["node-2"]["body"] == {"id": 42, "accepted": True}

        # An unknown webhook token is refused.
        bad = httpx.post(platform.runner_url + "/hooks/" + "x" * 43, json={}, timeout=10)
        assert bad.status_code == 404

        platform.stop()
        platform.start()

        api = httpx.Client(base_url=platform.api_url, timeout=30)
        headers = sign_in(api, email, password)
        konnects = api.get("/api/v1/konnects", headers=headers).json()["konnects"]
        assert [(k["konnect_name"], k["status"]) for k in konnects] == [("Orders to CRM", "Published")]
        assert len(logs()) == 1
        wait_until(post_hook)
        wait_until(lambda: len(logs()) == 2)
        assert len(receiver.requests) == 2


def test_flows_refuse_private_addresses_unless_allowed(receiver) -> None:
    with running_platform("konnectz-guard-", KONNECTZ_ALLOW_PRIVATE_NETWORKS="") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        email, password = "guard@example.com", "correct horse battery"
        api.post(
            "/api/v1/signup",
            json={
                "email": email,
                "first_name": "G",
                "last_name": "",
                "password": password,
                "password_confirmation": password,
            },
        )
        mail = wait_until(lambda: [m for m in api.get("/dev/mail.json").json() if m["to"] == email])
        token = re.search(r"/verify-email/(\S+)", mail[0]["text"]).group(1)
        api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
        headers = sign_in(api, email, password)
        konnect_id = trigger_konnect_id(api, headers, canvas(receiver.url))
        published = api.post(
            "/api/v1/konnects/publish_konnect",
            headers=headers,
            json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas(receiver.url)},
        ).json()
        wait_until(lambda: httpx.post(published["webhook_url"], json={"name": "x"}).status_code == 200)
        task_logs = wait_until(
            lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={published['konnect_id']}", headers=headers).json()[
                "task_logs"
            ]
        )
        assert task_logs[0]["status"] == "ERROR"
        assert "private address" in task_logs[0]["data"]["node-2"]["error"]
        assert receiver.requests == []
