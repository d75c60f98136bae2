"""Approval (docs/waits.md, "Approval") in a real headless Chromium against the real stack: a person
builds Webhook → Approval (approver: themselves) → API Call by clicks and publishes; a POST to the webhook
starts a run that waits; the approval is on the Pending approvals page (the side menu's Approvals), where
the person approves it; the run goes on, the API Call is made once with the decision, and the task log
says who decided. A second run approved from the mailed link: the used link's page says so, and the page
no longer lists it."""

from __future__ import annotations

import json
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


def test_an_approval_built_by_clicks_is_decided_on_the_pending_approvals_page(
    page: Page, platform: Platform, open_task_log, ui
) -> None:
    _After.calls = []
    server = LocalServer(_After)
    try:
        email = ui.new_flow(page, platform, "approval", PASSWORD)
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        wait_until(lambda: httpx.post(url, json={"order": "A-1"}).status_code < 300, timeout=30)
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

        # Approval, from the Add-Ons drawer: its event, then who approves, the message and the timeout.
        ui.add_step(page, "add-ons", "approval", "approv")
        expect(page.get_by_test_id("node-node-2")).to_contain_text("Approval")
        ui.choose(page, "event-select-node-2", "event-option-ask_approval")
        expect(page.get_by_test_id("config-node-2-approvers")).to_be_visible()
        text_box(page, "config-node-2-approvers").fill(email)
        ui.reference(page, "config-node-2-message", "ord", before="Ship order ")
        expect(text_box(page, "config-node-2-message")).to_have_value("Ship order {{node-1.order}}")
        text_box(page, "config-node-2-timeout").fill("1")
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
        konnect_id = ui.publish_flow(page, "Ship with approval")

        ui.post_published(url, {"order": "B-2"})
        _approval_links(platform, email, "Ship order B-2")  # the run reached the approval: the mail is sent
        assert _After.calls == []

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

        wait_until(lambda: _After.calls, timeout=60, what="the API Call after the approval")
        page.wait_for_timeout(1000)  # a second call would come now, not later
        assert _After.calls == [{"order": "B-2", "decision": "approved"}]

        page.get_by_test_id("nav-flows").click()
        page.wait_for_url("**/flows/home")
        open_task_log(page, konnect_id, f"resumed by the decision of {email}")
        details = page.get_by_test_id("tasklog-details")
        expect(details.locator("[data-testid^='task-status-']")).to_have_count(2)
        for status in details.locator("[data-testid^='task-status-']").all():
            expect(status).to_have_text("Success")
        page.locator(".ant-modal-wrap:visible .ant-modal-close").first.click()
        expect(page.locator(".ant-modal-wrap:visible")).to_have_count(0)

        # A second run, approved from the mailed link: the page no longer lists it, and the used link says so.
        ui.post_published(url, {"order": "C-3"})
        approve, _reject = _approval_links(platform, email, "Ship order C-3")
        page.get_by_test_id("nav-approvals").click()
        expect(page.locator(".kz-approvals tr", has_text="Ship order C-3")).to_be_visible()
        page.goto(approve)
        expect(page.get_by_role("heading")).to_have_text("Approve this request?")
        page.get_by_role("button", name="Approve").click()
        expect(page.get_by_role("heading")).to_have_text("Thank you")
        wait_until(lambda: len(_After.calls) == 2, timeout=60, what="the second run's API Call")
        assert _After.calls[1] == {"order": "C-3", "decision": "approved"}
        page.goto(approve)
        expect(page.get_by_role("heading")).to_have_text("Already decided")
        expect(page.locator("body")).to_contain_text(f"approved by {email}")
        page.goto("/approvals")
        expect(page.get_by_test_id("approvals-empty")).to_be_visible()
    finally:
        server.stop()
