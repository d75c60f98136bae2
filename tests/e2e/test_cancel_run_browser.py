"""Cancelling a waiting run from the browser: the flow history shows a run waiting in a Delay with
its Cancel button; after a confirm it ends at once as Cancelled, naming who cancelled it.

The flow (Webhook -> API call -> Delay 1 hour -> API call to a local service) is published through
the api; the run is started by a request to its webhook URL; the rest is clicks in Chromium.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import (
    delay_canvas,
    publish_canvas,
    sign_in_through_form,
    sign_up,
    wait_until,
)

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


class Service:
    """A local service that records the paths it was posted to."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        outer = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.paths.append(self.path)
                self._reply(200, {"ok": True})

        self.server = LocalServer(Handler)


@pytest.fixture
def service() -> Iterator[Service]:
    s = Service()
    yield s
    s.server.stop()


def test_cancel_a_waiting_run_from_the_history(page: Page, platform: Platform, service: Service) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    email = f"cancel-{time.time_ns()}@example.com"
    headers = sign_up(api, email, PASSWORD)
    published = publish_canvas(api, headers, delay_canvas(service.server.url, "Remind me in an hour"))
    konnect_id, hook = published["konnect_id"], published["webhook_url"]
    run_id = wait_until(lambda: httpx.post(hook, json={"n": 1}).json().get("run_id"), what="the webhook is live")
    wait_until(lambda: service.paths == ["/before"], what="the step before the delay")

    sign_in_through_form(page, email, PASSWORD)
    page.goto("/logs")
    page.get_by_test_id(f"history-open-{konnect_id}").click()
    drawer = page.get_by_test_id("history-drawer")
    status = drawer.get_by_test_id(f"active-run-status-{run_id}")
    expect(status).to_contain_text("Waiting until", timeout=30_000)
    expect(status).to_have_attribute("data-status", "WAITING")

    drawer.get_by_test_id(f"cancel-run-{run_id}").click()
    page.get_by_role("button", name="Cancel run").click()
    expect(page.get_by_text("The run is being cancelled")).to_be_visible()

    # The run leaves the active runs and its task log says Cancelled, by whom, at once (not in an hour).
    expect(drawer.get_by_test_id(f"active-run-{run_id}")).to_have_count(0, timeout=30_000)
    run = drawer.locator("[data-testid^='history-log-']").first
    expect(run.locator("[data-testid^='history-run-status-']")).to_have_text("Cancelled", timeout=30_000)
    expect(run.locator("[data-testid^='cancelled-by-']")).to_have_text(f"Cancelled by {email}")

    logs = api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
    assert [(r["run_id"], r["status"], r["cancelled_by"]) for r in logs] == [(run_id, "CANCELLED", email)]
    time.sleep(1.0)
    assert service.paths == ["/before"]  # the step after the delay never ran
