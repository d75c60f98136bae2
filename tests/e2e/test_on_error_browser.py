"""A step's On Error settings in a real headless Chromium against the real stack (issue 37, item 1):
set in the card's drawer, published with the flow, applied by the runner to a server that fails
twice, and shown in the run's task log; shown again when the flow is reopened."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import publish_canvas, sign_in, text_box, wait_until, webhook_canvas

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


class _Flaky(JsonHandler):
    """POST /orders answers 503 to its first two calls, then 200."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Flaky.calls.append({"body": body, "key": self.headers.get("Idempotency-Key")})
        self._reply(503 if len(_Flaky.calls) <= 2 else 200, {"ok": len(_Flaky.calls) > 2})


def test_on_error_set_in_the_card_retries_the_published_step(page: Page, platform: Platform, open_task_log, ui) -> None:
    _Flaky.calls = []
    server = LocalServer(_Flaky)
    try:
        ui.new_flow(page, platform, "onerror", PASSWORD)
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        wait_until(lambda: httpx.post(url, json={"order": "A-1"}).status_code < 300, timeout=30)
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
        ui.add_step(page, "add-action", "api", "api")
        text_box(page, "api-endpoint-url").fill(f"{server.url}/orders")
        page.get_by_test_id("api-body-add").click()
        text_box(page, "api-body-key-0").fill("order")
        text_box(page, "api-body-value-0").fill("{{node-1.order}}")

        # The card's On Error: 2 retries, the same short wait each time, continue on error off.
        button = page.get_by_test_id("node-on-error-node-2")
        expect(button.locator(".kz-on-error-set")).to_have_count(0)
        button.click()
        page.get_by_test_id("on-error-retries-node-2").fill("2")
        ui.choose(page, "on-error-backoff-node-2", "on-error-backoff-fixed")
        page.get_by_test_id("on-error-delay-node-2").fill("0.2")
        page.get_by_test_id("on-error-save-node-2").click()
        expect(page.get_by_test_id("on-error-form-node-2")).to_have_count(0)
        expect(button.locator(".kz-on-error-set")).to_have_count(1)  # the header shows a policy is set

        konnect_id = ui.publish_flow(page, "Retried orders")
        wait_until(lambda: httpx.post(url, json={"order": "B-2"}).status_code == 200, timeout=20, what="the webhook")
        wait_until(lambda: len(_Flaky.calls) >= 3, timeout=30, what="three tries")
        assert [c["body"] for c in _Flaky.calls] == [{"order": "B-2"}] * 3
        assert len({c["key"] for c in _Flaky.calls}) == 1  # one Idempotency-Key for the three tries

        open_task_log(page, konnect_id, "Tried 3 times")
        details = page.get_by_test_id("tasklog-details")
        expect(details.locator("[data-testid^='task-retries-']")).to_contain_text("HTTP 503")

        # Reopened: the drawer shows what was published.
        page.goto(f"/create/{konnect_id}")
        page.get_by_test_id("node-on-error-node-2").click()
        expect(page.get_by_test_id("on-error-retries-node-2")).to_have_value("2")
        expect(page.get_by_test_id("on-error-delay-node-2")).to_have_value("0.2")
        expect(page.get_by_test_id("on-error-backoff-node-2")).to_contain_text("The same each time")
    finally:
        server.stop()


class _Broken(JsonHandler):
    """POST /orders always answers 503; any other path 200. Both record what they were sent."""

    calls: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        _Broken.calls.append({"path": self.path, "body": body})
        self._reply(503 if self.path == "/orders" else 200, {"ok": self.path != "/orders"})


def test_an_error_flow_is_built_in_the_editor_and_runs_for_a_failed_run(
    page: Page, platform: Platform, open_task_log, ui
) -> None:
    """The "When a flow fails" trigger: its card offers the account's flows; its Test & Review shows the
    fields a failure has; published, it runs once when another flow fails."""
    _Broken.calls = []
    server = LocalServer(_Broken)
    try:
        email = ui.new_flow(page, platform, "errorflow", PASSWORD)
        with httpx.Client(base_url=platform.api_url, timeout=30) as api:
            headers = sign_in(api, email, PASSWORD)
            failing = publish_canvas(api, headers, webhook_canvas(f"{server.url}/orders", name="Orders to CRM"))

        page.get_by_test_id("trigger-picker-search").fill("fails")
        page.get_by_test_id("app-tile-flow_failed").click()
        expect(page.get_by_test_id("node-summary-node-1")).to_have_text("Every flow")
        page.get_by_test_id("flow-failed-flows-node-1").click()  # a multiple select: it stays open
        option = page.locator(
            f".ant-select-dropdown:visible [data-testid='flow-failed-option-{failing['konnect_id']}']"
        )
        expect(option).to_contain_text("Orders to CRM")
        option.dispatch_event("click")
        page.keyboard.press("Escape")
        expect(page.get_by_test_id("node-summary-node-1")).to_have_text("1 flow")
        ui.test_node(page, "node-1")
        ui.add_step(page, "add-action", "api", "api")
        text_box(page, "api-endpoint-url").fill(f"{server.url}/alerts")
        page.get_by_test_id("api-body-add").click()
        text_box(page, "api-body-key-0").fill("error")
        ui.reference(page, "api-body-value-0", "error")
        konnect_id = ui.publish_flow(page, "Tell me about failures")

        wait_until(lambda: httpx.post(failing["webhook_url"], json={"name": "Ada"}).status_code == 200, timeout=20)
        alerts = wait_until(lambda: [c for c in _Broken.calls if c["path"] == "/alerts"], timeout=30, what="the alert")
        assert len(alerts) == 1 and alerts[0]["body"]["error"].startswith("HTTP 503")
        with httpx.Client(base_url=platform.api_url, timeout=30) as api:
            logs = wait_until(
                lambda: api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"],
                what="the error flow's task log",
            )
        assert len(logs) == 1 and logs[0]["status"] == "SUCCESS", logs
        open_task_log(page, konnect_id, "Orders to CRM")
    finally:
        server.stop()
