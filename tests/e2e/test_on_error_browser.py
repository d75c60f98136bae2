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
from konnectz_devstack.testing import text_box, wait_until

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
