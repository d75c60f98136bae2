"""Replaying a failed run from the browser: the Error log's Replay button starts one linked run.

A flow whose API call fails once (the local service answers 500 to its first request) leaves an
ERROR task log; Replay in the flow list's task details stores the same request as a new run,
which succeeds and whose details say which run it replays.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import publish_canvas, sign_in_through_form, sign_up, wait_until, webhook_canvas

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


class FlakyService:
    """Answers 500 to the first request, 201 afterwards; keeps the bodies."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        outer = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                outer.bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
                self._reply(500 if len(outer.bodies) == 1 else 201, {})

        self.server = LocalServer(Handler)
        self.url = f"{self.server.url}/orders"


@pytest.fixture
def service() -> Iterator[FlakyService]:
    s = FlakyService()
    yield s
    s.server.stop()


def test_replay_a_failed_run_from_its_task_details(
    page: Page, platform: Platform, service: FlakyService, select_tab
) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    email = f"replay-{time.time_ns()}@example.com"
    headers = sign_up(api, email, PASSWORD)
    canvas = webhook_canvas(service.url, name="Replay me")
    published = publish_canvas(api, headers, canvas)
    konnect_id, hook = published["konnect_id"], published["webhook_url"]
    wait_until(lambda: httpx.post(hook, json={"name": "Ada"}).status_code == 200, what="the webhook is live")

    def logs() -> list[dict[str, Any]]:
        return api.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]

    [failed] = wait_until(logs, what="the failed run")
    assert failed["status"] == "ERROR"

    sign_in_through_form(page, email, PASSWORD)
    page.goto("/flows/home")
    page.get_by_test_id(f"flow-logs-{konnect_id}").click()
    # The Success tab has loaded (the run failed, so it is empty) before the Error tab is chosen;
    # a click during the modal's opening could be lost.
    expect(page.get_by_text("No Task Logs Found")).to_be_visible()
    select_tab(page, "Error")
    page.get_by_test_id(f"tasklog-item-{failed['id']}").click()
    details = page.get_by_test_id("tasklog-details")
    expect(details.get_by_test_id("run-facts")).to_contain_text(failed["run_id"])
    details.get_by_test_id(f"replay-{failed['id']}").click()
    expect(page.get_by_text("The run was replayed")).to_be_visible()

    def two() -> list[dict[str, Any]]:
        found = logs()
        return found if len(found) == 2 else []

    both = wait_until(two, what="the replayed run")
    replayed = next(item for item in both if item["id"] != failed["id"])
    assert replayed["status"] == "SUCCESS" and replayed["replay_of"] == failed["run_id"]
    assert service.bodies == [{"customer": "Ada"}, {"customer": "Ada"}]  # the same request, once more
    # A second click replays nothing more: the api answers the first replay, and the page says so.
    details.get_by_test_id(f"replay-{failed['id']}").click()
    expect(page.get_by_text("This run was replayed already")).to_be_visible()
    time.sleep(1.0)
    assert len(logs()) == 2 and len(service.bodies) == 2
    select_tab(page, "Success")
    page.get_by_test_id(f"tasklog-item-{replayed['id']}").click()
    expect(page.locator("[data-testid='run-facts']:visible")).to_contain_text("Replay of")
    expect(page.locator("[data-testid='run-facts']:visible")).to_contain_text(failed["run_id"])
