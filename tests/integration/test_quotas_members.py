"""Quotas and members through real processes (api + runner + PostgreSQL + NATS + SMTP, as `make dev`).

An administrator gives an account the Agency plan with the documented command; the agency adds a
sub-account with a quota of 2 tasks; the sub-account joins by the mailed link, publishes a flow with one
action and posts to its webhook three times: two runs execute, the third is refused by the runner and
shows as a REFUSED task log with the reason (not the request). Then the webhook is refused at ingress
(402 with the reason; nothing stored, no task log). A team member with access Create cannot delete a flow.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import httpx
import pytest

from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import sign_in, wait_until, webhook_canvas
from konnectz_devstack.testing import test_trigger as trigger_konnect_id

pytestmark = pytest.mark.integration


def canvas(endpoint: str) -> dict[str, Any]:
    return webhook_canvas(f"{endpoint}/orders", name="Quota flow", body=[{"key": "n", "value": "{{node-1.n}}"}])


def mail_link(api: httpx.Client, email: str, kind: str) -> str:
    mails = wait_until(lambda: [m for m in api.get("/dev/mail.json").json() if m["to"] == email])
    return next(u for m in mails for u in m["links"] if f"/{kind}/" in u)


def sign_up(api: httpx.Client, email: str, password: str) -> dict[str, str]:
    body = {
        "email": email,
        "first_name": "A",
        "last_name": "B",
        "password": password,
        "password_confirmation": password,
        "is_admin": False,
    }
    assert api.post("/api/v1/signup", json=body).status_code == 201
    token = mail_link(api, email, "verify-email").rsplit("/", 1)[1]
    api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
    return sign_in(api, email, password)


def join(api: httpx.Client, email: str, password: str) -> dict[str, str]:
    token = mail_link(api, email, "reset-password").rsplit("/", 1)[1]
    body = {"reset_password_token": token, "password": password, "password_confirmation": password}
    assert api.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return sign_in(api, email, password)


def set_plan(platform, email: str, plan: str) -> None:
    env = {**os.environ, **platform.component_env()}
    out = subprocess.run(
        [sys.executable, "-m", "konnectz_api", "plan", "set", email, plan],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert f"plan {plan}" in out.stdout


def test_sub_account_quota_is_enforced_by_the_runner_and_team_access_by_the_api(receiver) -> None:
    with running_platform("konnectz-quota-") as platform:
        api = httpx.Client(base_url=platform.api_url, timeout=30)
        agency = sign_up(api, "agency@example.com", "agency-password")
        set_plan(platform, "agency@example.com", "Agency")
        r = api.post(
            "/api/v1/members/add_agency_user",
            headers=agency,
            json={"email": "sub@example.com", "name": "Sub Account", "task": 2},
        )
        assert r.status_code == 200, r.text
        sub = join(api, "sub@example.com", "sub-password-1")

        r = api.post(
            "/api/v1/konnects/publish_konnect",
            headers=sub,
            json={
                "konnect_id": trigger_konnect_id(api, sub, canvas(receiver.url)),
                "canvas_name": True,
                "canvas_json": canvas(receiver.url),
            },
        )
        assert r.status_code == 200, r.text
        hook, konnect_id = r.json()["webhook_url"], r.json()["konnect_id"]
        wait_until(lambda: httpx.post(hook, json={"n": 1}, timeout=10).status_code == 200)
        for n in (2, 3):
            assert httpx.post(hook, json={"n": n}, timeout=10).status_code == 200

        def logs() -> list[dict[str, Any]]:
            url = f"/api/v1/task_logs/logs?konnect_id={konnect_id}"
            found = api.get(url, headers=sub).json()["task_logs"]
            return found if len(found) == 3 else []

        task_logs = wait_until(logs, timeout=40)
        assert sorted(t["status"] for t in task_logs) == ["REFUSED", "SUCCESS", "SUCCESS"]
        refused = next(t for t in task_logs if t["status"] == "REFUSED")
        assert re.search(
            r"Task quota exceeded: this run needs 1 task\(s\) but only 0 of the 2 tasks",
            refused["data"]["quota"]["error"],
        )
        assert len(receiver.requests) == 2  # the refused run called nothing
        # The refused run's task log says it was refused, not what was sent.
        assert refused["data"]["node-1"] == {
            "refused": True,
            "message": "The run was refused, so its request was not kept.",
        }
        # From now on the quota is refused at ingress: 402 with the reason, nothing stored, no task log.
        answers: list[httpx.Response] = []

        def refused_at_ingress() -> httpx.Response | None:
            answers.append(httpx.post(hook, json={"n": 4}, timeout=10))
            return answers[-1] if answers[-1].status_code == 402 else None

        assert "Task quota exceeded" in wait_until(refused_at_ingress, timeout=15).json()["message"]
        accepted = sum(1 for a in answers if a.status_code == 200)  # before the runner heard of the refusal
        assert accepted <= 1
        url = f"/api/v1/task_logs/logs?konnect_id={konnect_id}"
        wait_until(lambda: len(api.get(url, headers=sub).json()["task_logs"]) == 3 + accepted, timeout=20)

        # A team member with access Create cannot delete the owner's flow.
        owner = sign_up(api, "team@example.com", "team-password")
        set_plan(platform, "team@example.com", "Team")
        owner = sign_in(api, "team@example.com", "team-password")
        r = api.post(
            "/api/v1/konnects/save_konnect",
            headers=owner,
            json={
                "konnect_id": trigger_konnect_id(api, owner, canvas(receiver.url)),
                "canvas_json": canvas(receiver.url),
                "canvas_name": True,
            },
        )
        flow = r.json()["konnect_id"]
        api.post(
            "/api/v1/members/add_team_user",
            headers=owner,
            json={"email": "member@example.com", "first_name": "Mem", "access": "Create"},
        )
        member = join(api, "member@example.com", "member-password")
        r = api.post(f"/api/v1/konnects/{flow}/update_status", headers=member, json={"status": "DELETED"})
        assert r.status_code == 403 and r.json()["key"] == "ACCESS_DENIED"
        assert [k["id"] for k in api.get("/api/v1/konnects", headers=owner).json()["konnects"]] == [flow]
