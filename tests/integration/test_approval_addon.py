"""Approval (issue 37 item 3, runner and api core) through real processes: api + runner + PostgreSQL + NATS
+ the dev mailbox.

Webhook -> Approval (approver from the request) -> API call to a local server with the decision. The
approver gets an e-mail with an Approve and a Reject link; the run waits (it is in the approver's
pending list); GET of a link shows the question and changes nothing; a forged link is 404; the
Approve link decides (the run goes on with ``decision: approved`` and who decided), then the Reject
link and the Approve link again answer 410. An approver who is neither the owner nor a team member is
refused: the run ends as ERROR saying so, and nobody is mailed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import CompileError
from konnectz_contracts.steps import COMPILERS
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.pytest_plugin import running_platform
from konnectz_devstack.testing import (
    api_call_node,
    canvas_node,
    chain_canvas,
    publish_canvas,
    sign_in,
    sign_up,
    wait_until,
)

pytestmark = pytest.mark.integration

OWNER = "boss@example.com"
MEMBER = "member@example.com"


def add_team_member(platform: Any, api: httpx.Client, headers: dict[str, str]) -> dict[str, str]:
    """MEMBER in OWNER's team (the Team plan), signed in through the mailed invitation."""
    env = {**os.environ, **platform.component_env()}
    command = [sys.executable, "-m", "konnectz_api", "plan", "set", OWNER, "Team"]
    subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=True)
    invited = api.post(
        "/api/v1/members/add_team_user", headers=headers, json={"email": MEMBER, "first_name": "M", "access": "Create"}
    )
    assert invited.status_code == 200, invited.text
    mails = wait_until(lambda: [m for m in api.get("/dev/mail.json").json() if m["to"] == MEMBER])
    token = next(u for m in mails for u in m["links"] if "/reset-password/" in u).rsplit("/", 1)[1]
    body = {"reset_password_token": token, "password": "member-password", "password_confirmation": "member-password"}
    assert api.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return sign_in(api, MEMBER, "member-password")


class Other(JsonHandler):
    calls: list[dict[str, Any]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with Other.lock:
            Other.calls.append(body)
        self._reply(200, {"ok": True})


def approval_canvas(url: str, *, approvers: str = "{{node-1.approver}}", timeout: str = "1") -> dict[str, Any]:
    config = [
        {"config_key": "approvers", "value": approvers},
        {"config_key": "message", "value": "Refund order {{node-1.n}}?"},
        {"config_key": "timeout", "value": timeout},
        {"config_key": "timeout_unit", "value": "hours"},
        {"config_key": "on_timeout", "value": "fail"},
    ]
    apps = [
        canvas_node("node-1", "WebhookInner", "webhook", 1, "Webhook",
                    selectedEvent={"id": "catch_hook", "name": "Catch Webhook"}, configResponses=[]),
        canvas_node("node-2", "ActionNode", "approval", 2, "Approve the refund", configResponses=config),
        api_call_node(url + "/after", node_id="node-3",
                      body=[{"key": "n", "value": "{{node-1.n}}"}, {"key": "decision", "value": "{{node-2.decision}}"},
                            {"key": "by", "value": "{{node-2.decided_by}}"}]),
    ]  # fmt: skip
    apps[2]["position"]["x"] = 1500
    return chain_canvas(apps, "Refunds")


def test_the_node_compiles_and_says_what_is_missing() -> None:
    def node(**fields: str) -> Any:
        return Canvas.model_validate(approval_canvas("http://127.0.0.1:1", **fields)).node("node-2")

    step = COMPILERS["approval"](node())
    assert step.approvers == "{{node-1.approver}}" and step.timeout == 1 and step.on_timeout == "fail"
    with pytest.raises(CompileError, match="enter who approves"):
        COMPILERS["approval"](node(approvers=" "))
    with pytest.raises(CompileError, match="enter the timeout"):
        COMPILERS["approval"](node(timeout=""))


def test_an_approval_is_mailed_decided_once_and_the_run_goes_on() -> None:
    Other.calls = []
    server = LocalServer(Other)
    try:
        with running_platform("konnectz-approval-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, OWNER, "correct horse battery")
            published = publish_canvas(api, headers, approval_canvas(server.url))
            konnect_id, hook = published["konnect_id"], published["webhook_url"]

            def mails_to(email: str) -> list[dict[str, Any]]:
                return [m for m in api.get("/dev/mail.json").json() if m["to"] == email and "Approval" in m["subject"]]

            wait_until(lambda: httpx.post(hook, json={"n": 7, "approver": OWNER}).status_code == 200)
            (mail,) = wait_until(lambda: mails_to(OWNER), what="the approval mail")
            links = [u for u in mail["links"] if "/approvals/decide/" in u]
            assert len(links) == 2
            approve, reject = links
            pending = wait_until(lambda: api.get("/api/v1/approvals", headers=headers).json()["approvals"])
            assert [(p["konnect_id"], p["step_id"], p["approvers"]) for p in pending] == [
                (konnect_id, "node-2", [OWNER])
            ]
            assert pending[0]["message"] == "Refund order 7?"
            active = api.get(f"/api/v1/konnects/{konnect_id}/runs/active", headers=headers).json()["runs"]
            assert active[0]["status"] == "WAITING" and active[0]["waiting_for"] == f"approval by {OWNER}"

            page = httpx.get(approve)
            assert page.status_code == 200 and "Approve this request?" in page.text and "Refund order 7?" in page.text
            assert httpx.get(reject).status_code == 200  # a GET changes nothing
            assert Other.calls == [] and len(api.get("/api/v1/approvals", headers=headers).json()["approvals"]) == 1
            forged = approve[:-1] + ("0" if approve[-1] != "0" else "1")
            assert httpx.post(forged).status_code == 404

            decided = httpx.post(approve)
            assert decided.status_code == 200 and "approved" in decided.text
            again = httpx.post(reject)
            assert again.status_code == 410 and "Already decided" in again.text
            assert httpx.get(approve).status_code == 410

            def logs() -> list[dict[str, Any]]:
                url = f"/api/v1/task_logs/logs?konnect_id={konnect_id}"
                return list(api.get(url, headers=headers).json()["task_logs"])

            (log,) = wait_until(logs, timeout=60, what="the task log")
            assert log["status"] == "SUCCESS"
            assert Other.calls == [{"n": 7, "decision": "approved", "by": OWNER}]
            tasks = {
                t["step_id"]: t
                for t in api.get(f"/api/v1/task_logs/{log['id']}/tasks", headers=headers).json()["tasks"]
            }
            assert tasks["node-2"]["data"]["output"]["approved"] is True
            assert f"resumed by the decision of {OWNER}" in tasks["node-2"]["data"]["wait_reason"]
            assert api.get("/api/v1/approvals", headers=headers).json()["approvals"] == []

            # Someone who is neither the owner nor a team member cannot be asked.
            wait_until(lambda: httpx.post(hook, json={"n": 8, "approver": "stranger@example.com"}).status_code == 200)
            refused = wait_until(lambda: [x for x in logs() if x["id"] != log["id"]], timeout=60, what="the refusal")
            assert refused[0]["status"] == "ERROR"
            tasks = api.get(f"/api/v1/task_logs/{refused[0]['id']}/tasks", headers=headers).json()["tasks"]
            assert "Not an approver of this flow: stranger@example.com" in tasks[0]["data"]["error"]
            assert mails_to("stranger@example.com") == []

            # A named team member: mailed, sees the approvals naming them (not the owner's others), decides.
            member = add_team_member(platform, api, headers)
            wait_until(lambda: httpx.post(hook, json={"n": 9, "approver": MEMBER}).status_code == 200)
            wait_until(lambda: httpx.post(hook, json={"n": 10, "approver": OWNER}).status_code == 200)
            (mail,) = wait_until(lambda: mails_to(MEMBER), what="the member's approval mail")
            reject = next(u for u in mail["links"] if "/approvals/decide/" in u and u != mail["links"][0])
            theirs = wait_until(lambda: api.get("/api/v1/approvals", headers=member).json()["approvals"])
            assert [p["approvers"] for p in theirs] == [[MEMBER]] and theirs[0]["message"] == "Refund order 9?"
            owners = wait_until(
                lambda: len(x := api.get("/api/v1/approvals", headers=headers).json()["approvals"]) == 2 and x
            )
            assert sorted(p["message"] for p in owners) == ["Refund order 10?", "Refund order 9?"]
            assert httpx.post(reject).status_code == 200
            wait_until(lambda: any(c["n"] == 9 for c in Other.calls), timeout=60, what="the rejected run's next step")
            assert {"n": 9, "decision": "rejected", "by": MEMBER} in Other.calls
            assert api.get("/api/v1/approvals", headers=member).json()["approvals"] == []

            # A decision link clicked twice at once, and the other link at the same moment: decided once.
            def mail_asking(n: int) -> list[str]:
                found = [m for m in mails_to(OWNER) if f"Refund order {n}?" in m["text"]]
                return [u for u in found[0]["links"] if "/approvals/decide/" in u] if found else []

            approve10, reject10 = wait_until(lambda: mail_asking(10), what="the mail asking about order 10")
            with ThreadPoolExecutor(3) as pool:
                replies = list(pool.map(httpx.post, [approve10, approve10, reject10]))
            assert sorted(r.status_code for r in replies) == [200, 410, 410], [r.text[:200] for r in replies]
            decision = "approved" if replies.index(next(r for r in replies if r.status_code == 200)) < 2 else "rejected"
            wait_until(lambda: any(c["n"] == 10 for c in Other.calls), timeout=60, what="order 10's next step")
            wait_until(lambda: len(logs()) == 4, timeout=60, what="order 10's task log")
            assert [c for c in Other.calls if c["n"] == 10] == [{"n": 10, "decision": decision, "by": OWNER}]

            # Run control: a waiting approval is listed with whom it waits for and until when, and cancelled.
            wait_until(lambda: httpx.post(hook, json={"n": 11, "approver": OWNER}).status_code == 200)
            approve11, _reject11 = wait_until(lambda: mail_asking(11), what="the mail asking about order 11")

            def waiting() -> dict[str, Any] | None:
                runs = api.get(f"/api/v1/konnects/{konnect_id}/runs/active", headers=headers).json()["runs"]
                return next((r for r in runs if r["status"] == "WAITING"), None)

            entry = wait_until(waiting, what="order 11 listed as WAITING")
            assert entry["step_id"] == "node-2" and entry["waiting_for"] == f"approval by {OWNER}"
            assert entry["waiting_since"] is not None and entry["resume_at"] > entry["waiting_since"]
            url = f"/api/v1/konnects/{konnect_id}/runs/{entry['run_id']}/cancel"
            assert api.post(url, headers=headers).status_code == 202
            cancelled = wait_until(lambda: [x for x in logs() if x["status"] == "CANCELLED"], timeout=60)
            assert len(cancelled) == 1 and cancelled[0]["cancelled_by"] == OWNER
            late = httpx.post(approve11)
            assert late.status_code == 410, late.text[:300]
            pending = api.get("/api/v1/approvals", headers=headers).json()["approvals"]
            assert all(p["message"] != "Refund order 11?" for p in pending)  # nobody is asked any more
            assert all(c["n"] != 11 for c in Other.calls)
            assert wait_until(lambda: waiting() is None, what="no waiting run") is True
    finally:
        server.stop()


def test_a_signed_in_decision_is_taken_once_and_only_by_who_may_see_it() -> None:
    """The Pending approvals page's call, ``POST /api/v1/approvals/{id}/decide``: a stranger gets 404 (and
    decides nothing), the owner decides once (the run goes on with their decision), a second decision
    and the mailed link afterwards answer 410."""
    Other.calls = []
    server = LocalServer(Other)
    try:
        with running_platform("konnectz-approval-signed-in-") as platform:
            api = httpx.Client(base_url=platform.api_url, timeout=30)
            headers = sign_up(api, OWNER, "correct horse battery")
            stranger = sign_up(api, "stranger@example.com", "correct horse battery")
            published = publish_canvas(api, headers, approval_canvas(server.url))
            hook = published["webhook_url"]
            wait_until(lambda: httpx.post(hook, json={"n": 11, "approver": OWNER}).status_code == 200)
            (pending,) = wait_until(lambda: api.get("/api/v1/approvals", headers=headers).json()["approvals"])
            url = f"/api/v1/approvals/{pending['id']}/decide"
            assert api.get("/api/v1/approvals", headers=stranger).json()["approvals"] == []
            assert api.post(url, headers=stranger, json={"decision": "approved"}).status_code == 404
            nobody = api.post("/api/v1/approvals/999999/decide", headers=headers, json={"decision": "approved"})
            assert nobody.status_code == 404
            assert api.post(url, headers=headers, json={"decision": "maybe"}).status_code == 422
            assert api.post(url, json={"decision": "approved"}).status_code == 401
            assert Other.calls == []

            decided = api.post(url, headers=headers, json={"decision": "rejected"})
            assert decided.status_code == 200, decided.text
            assert decided.json()["status"] == "rejected"
            again = api.post(url, headers=headers, json={"decision": "approved"})
            assert again.status_code == 410 and "Already decided: rejected by " + OWNER in again.text
            (mail,) = [m for m in api.get("/dev/mail.json").json() if m["to"] == OWNER and "Approval" in m["subject"]]
            approve = next(u for u in mail["links"] if "/approvals/decide/" in u)
            assert httpx.post(approve).status_code == 410
            wait_until(lambda: Other.calls, timeout=60, what="the step after the approval")
            assert Other.calls == [{"n": 11, "decision": "rejected", "by": OWNER}]
            assert api.get("/api/v1/approvals", headers=headers).json()["approvals"] == []
    finally:
        server.stop()
