"""Approval (docs/waits.md, "Approval") in a real headless Chromium against the real stack: a person
builds Webhook (answered by a Respond step) → Approval (its own card: approver themselves, a message with
a reference, the timeout) → API Call → Respond by clicks, tests the Approval and the Respond, and
publishes. A caller POSTs to the webhook and is held while the run waits; the approval is on the Pending
approvals page, where the person approves it; the run goes on, the API Call is made once with the
decision, the held caller receives the Respond step's answer, and the task log says whom the run waited
for and who decided. A second run is approved from the dev mailbox's Approve link: its caller receives
its answer too; the used link's page says so, and the page no longer lists it."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


class _After(JsonHandler):
    """POST /after records what the step after the approval sent."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _After.calls.append(body)
        self._reply(200, {"ok": True})


def _approval_links(platform: Platform, email: str, message: str) -> list[str]:
    """The Approve and Reject links of the approval mail to ``email`` asking ``message`` (waited for)."""

    def links() -> list[str]:
        for mail in httpx.get(f"{platform.api_url}/dev/mail.json").json():
            if mail["to"] == email and "Approval needed" in mail["subject"] and message in mail["text"]:
                return [u for u in mail["links"] if "/approvals/decide/" in u]
        return []

    return wait_until(links, timeout=30, what=f"the approval mail to {email} asking {message!r}")


def _held_caller(url: str, payload: dict[str, Any]) -> httpx.Response:
    """The caller of the published webhook: one POST held until the Respond step answers (the first
    answers that are the 404 of a flow the runner has not loaded yet are made again)."""

    def answered() -> httpx.Response | None:
        reply = httpx.post(url, json=payload, timeout=RESPOND_TIMEOUT + 30)
        return None if reply.status_code == 404 else reply

    reply: httpx.Response = wait_until(answered, timeout=30, what="the published webhook")
    return reply


#: How long the Webhook holds its caller for the Respond step (the most it allows).
RESPOND_TIMEOUT = 120


def test_an_approval_built_by_clicks_is_decided_and_the_caller_gets_the_answer(
    page: Page, platform: Platform, open_task_log, ui
) -> None:
    _After.calls = []
    server = LocalServer(_After)
    pool = ThreadPoolExecutor(1)
    try:
        email = ui.new_flow(page, platform, "approval", PASSWORD)
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        wait_until(lambda: httpx.post(url, json={"order": "A-1"}).status_code < 300, timeout=30)
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
        ui.choose(page, "webhook-respond-node-1", "webhook-respond-option-step")
        page.get_by_test_id("webhook-respond-timeout-node-1").fill(str(RESPOND_TIMEOUT))
        expect(page.get_by_test_id("webhook-respond-timeout-node-1")).to_have_value(str(RESPOND_TIMEOUT))

        # Approval, from the Add-Ons drawer, on its own card: who approves, the message, the timeout.
        ui.add_step(page, "add-ons", "approval", "approv")
        card = page.get_by_test_id("node-node-2")
        expect(card).to_contain_text("Approval")
        expect(page.get_by_test_id("approval-approvers-hint-node-2")).to_contain_text("the first decision counts")
        text_box(page, "addon-node-2-approvers").fill(email)
        ui.reference(page, "addon-node-2-message", "ord", before="Ship order ")
        expect(text_box(page, "addon-node-2-message")).to_have_value("Ship order {{node-1.order}}")
        expect(page.get_by_test_id("wait-timeout-node-2")).to_have_value("1")
        ui.choose(page, "wait-unit-node-2", "wait-unit-option-hours")
        expect(page.get_by_test_id("node-summary-node-2")).to_have_text("1 approver · up to 1 hour")
        ui.test_node(page, "node-2")  # mails nobody: a sample decision for the steps after it
        page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
        expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"decision": "approved"')

        ui.add_step(page, "add-action", "api", "api")
        text_box(page, "api-endpoint-url").fill(f"{server.url}/after")
        page.get_by_test_id("api-body-add").click()
        text_box(page, "api-body-key-0").fill("order")
        text_box(page, "api-body-value-0").fill("{{node-1.order}}")
        page.get_by_test_id("api-body-add").click()
        text_box(page, "api-body-key-1").fill("decision")
        text_box(page, "api-body-value-1").fill("{{node-2.decision}}")

        # Respond, answering the held caller with the decision.
        ui.add_step(page, "add-ons", "respond", "respond")
        expect(page.get_by_test_id("node-node-4")).to_contain_text("Respond")
        ui.choose(page, "event-select-node-4", "event-option-respond")
        expect(page.get_by_test_id("config-node-4-body")).to_be_visible()
        text_box(page, "config-node-4-body").fill("Order {{node-1.order}}: {{node-2.decision}}")
        ui.test_node(page, "node-4")
        page.get_by_test_id("response-view-node-4").get_by_text("JSON").click()
        expect(page.get_by_test_id("response-json-node-4")).to_contain_text('"body": "Order A-1: approved"')
        konnect_id = ui.publish_flow(page, "Ship with approval")

        caller = pool.submit(_held_caller, url, {"order": "B-2"})
        _approval_links(platform, email, "Ship order B-2")  # the run reached the approval: the mail is sent
        assert _After.calls == [] and not caller.done()  # the caller is held while the run waits

        page.get_by_test_id("nav-approvals").click()
        page.wait_for_url("**/approvals")
        row = page.locator(".kz-approvals tr", has_text="Ship order B-2")
        expect(row).to_be_visible()
        expect(row).to_contain_text("Ship with approval")
        expect(row).to_contain_text(email)
        row.get_by_role("button", name="Approve").click()
        page.locator(".ant-popover:visible").get_by_role("button", name="Approve").click()
        expect(page.get_by_text("The request was approved. The run goes on.")).to_be_visible()
        expect(page.get_by_test_id("approvals-empty")).to_be_visible()

        answer = caller.result(timeout=RESPOND_TIMEOUT + 60)
        assert (answer.status_code, answer.text) == (200, "Order B-2: approved"), answer.text
        wait_until(lambda: _After.calls, timeout=60, what="the API Call after the approval")
        page.wait_for_timeout(1000)  # a second call would come now, not later
        assert _After.calls == [{"order": "B-2", "decision": "approved"}]

        page.get_by_test_id("nav-flows").click()
        page.wait_for_url("**/flows/home")
        open_task_log(page, konnect_id, f"by the decision of {email}")
        details = page.get_by_test_id("tasklog-details")
        expect(details.locator("[data-testid^='task-status-']")).to_have_count(3)
        for status in details.locator("[data-testid^='task-status-']").all():
            expect(status).to_have_text("Success")
        waited = details.locator("[data-testid^='task-wait-record-']")
        expect(waited).to_contain_text("Until (timeout)")
        expect(details.locator("[data-testid^='task-wait-']").first).to_contain_text(f"Waited for approval by {email}")
        expect(details.locator("[data-testid^='task-answer-']")).to_contain_text("Answered the webhook: 200")
        page.locator(".ant-modal-wrap:visible .ant-modal-close").first.click()
        expect(page.locator(".ant-modal-wrap:visible")).to_have_count(0)

        # A second run, approved from the dev mailbox: its caller gets its answer; the page no longer lists it.
        caller = pool.submit(_held_caller, url, {"order": "C-3"})
        approve, _reject = _approval_links(platform, email, "Ship order C-3")
        page.get_by_test_id("nav-approvals").click()
        expect(page.locator(".kz-approvals tr", has_text="Ship order C-3")).to_be_visible()
        page.goto(f"{platform.api_url}/dev/mail")
        mail = page.locator("article", has_text="Ship order C-3")
        mail.locator("a[href*='/approvals/decide/']").first.click()
        expect(page.get_by_role("heading")).to_have_text("Approve this request?")
        page.get_by_role("button", name="Approve").click()
        expect(page.get_by_role("heading")).to_have_text("Thank you")
        answer = caller.result(timeout=RESPOND_TIMEOUT + 60)
        assert (answer.status_code, answer.text) == (200, "Order C-3: approved"), answer.text
        wait_until(lambda: len(_After.calls) == 2, timeout=60, what="the second run's API Call")
        assert _After.calls[1] == {"order": "C-3", "decision": "approved"}
        page.goto(approve)
        expect(page.get_by_role("heading")).to_have_text("Already decided")
        expect(page.locator("body")).to_contain_text(f"approved by {email}")
        page.goto("/approvals")
        expect(page.get_by_test_id("approvals-empty")).to_be_visible()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        server.stop()
