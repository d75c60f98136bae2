"""Paths that join, in a real headless Chromium against the real stack, by clicks and typing only.

Webhook (a captured request) -> Router with two paths: "Big" when the amount is Greater Than 100,
"Small" otherwise -> a Hash step on each path (added with each path's own Add step button) -> Join
(the router's Join paths button). Each step is tested (Test & Review), the flow is published and run
by a request to its webhook with amount 150: the task log shows the Big path's Hash step as Success
under its path's tag and the Small path's Hash step as Skipped, with the reason.
"""

from __future__ import annotations

import hashlib
import time

import httpx
import pytest
from playwright.sync_api import Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
PASSWORD = "a-long-password"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _fit(page: Page) -> None:
    """Fit the whole flow into view (the Eagle Eye tool fits the canvas each time it is clicked)."""
    page.get_by_test_id("eagle-eye").click()
    page.wait_for_timeout(400)


def _hash_step(page: Page, ui, node_id: str, search: str) -> None:
    """The Hash step just added: its event, Text = a reference to the webhook's field."""
    ui.choose(page, f"event-select-{node_id}", "event-option-hash_text")
    expect(page.get_by_test_id(f"config-{node_id}-text")).to_be_visible()
    ui.reference(page, f"config-{node_id}-text", search)


def test_router_two_paths_joined_one_runs_one_skipped(page: Page, platform: Platform, open_task_log, ui) -> None:
    started = time.monotonic()
    ui.new_flow(page, platform, "paths", PASSWORD)
    page.get_by_test_id("trigger-picker-search").fill("web")
    page.get_by_test_id("app-tile-webhook").click()
    page.get_by_test_id("capture-node-1").click()
    url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
    sample = {"amount": 150, "email": "ada@example.com", "name": "Ada"}
    wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
    expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

    # The router, from the Add-Ons drawer: two paths, the second the Otherwise path.
    ui.add_step(page, "add-ons", "router", "router")
    router = page.get_by_test_id("node-node-2")
    expect(router).to_contain_text("Run every matching path")
    expect(page.get_by_test_id("path-name-node-2-path-1")).to_have_value("Path 1")
    expect(page.get_by_test_id("path-otherwise-node-2-path-2")).to_be_checked()
    page.get_by_test_id("path-name-node-2-path-1").fill("Big")
    page.get_by_test_id("path-name-node-2-path-2").fill("Small")
    ui.reference(page, "condition-field-node-2-path-1-0", "amo")
    expect(text_box(page, "condition-field-node-2-path-1-0")).to_have_value("{{node-1.amount}}")
    ui.choose(page, "condition-operator-node-2-path-1-0", "operator-option-Greater Than")
    page.get_by_test_id("condition-value-node-2-path-1-0").fill("100")

    # A Hash step on each path, each with its path's own Add step button.
    page.get_by_test_id("path-add-step-node-2-path-1").click()
    page.get_by_test_id("action-drawer-search").fill("hash")
    page.locator(".ant-drawer:visible [data-testid='app-tile-hash']").first.click()
    expect(page.get_by_test_id("node-node-3")).to_be_visible()
    _hash_step(page, ui, "node-3", "ema")
    _fit(page)
    page.get_by_test_id("path-add-step-node-2-path-2").click()
    page.get_by_test_id("action-drawer-search").fill("hash")
    page.locator(".ant-drawer:visible [data-testid='app-tile-hash']").first.click()
    expect(page.get_by_test_id("node-node-4")).to_be_visible()
    _hash_step(page, ui, "node-4", "nam")
    expect(text_box(page, "config-node-4-text")).to_have_value("{{node-1.name}}")
    _fit(page)
    expect(page.get_by_test_id("path-steps-node-2-path-1")).to_have_text("1 step")
    expect(page.get_by_test_id("path-steps-node-2-path-2")).to_have_text("1 step")
    # Each path leads from its own handle: two edges out of the router.
    expect(page.locator(".react-flow__edge[data-testid^='rf__edge-link-node-2-']")).to_have_count(2)

    # Join the paths with the router's button.
    page.get_by_test_id("router-join-node-2").click()
    expect(page.get_by_test_id("node-node-5")).to_be_visible()
    expect(page.get_by_test_id("join-paths-node-5")).to_contain_text("Big")
    expect(page.get_by_test_id("join-paths-node-5")).to_contain_text("Small")
    expect(page.get_by_test_id("router-join-node-2")).to_have_count(0)
    _fit(page)

    # Test & Review of each step.
    ui.test_node(page, "node-2")
    page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
    expect(page.get_by_test_id("response-json-node-2")).to_contain_text('"Big"')
    expect(page.get_by_test_id("response-json-node-2")).not_to_contain_text('"Small"')
    ui.test_node(page, "node-3")
    expect(page.get_by_test_id("response-node-3")).to_contain_text("hash")
    ui.test_node(page, "node-4")
    ui.test_node(page, "node-5")
    # The join tested alone: the path ends' results under the paths' names.
    page.get_by_test_id("response-view-node-5").get_by_text("JSON").click()
    expect(page.get_by_test_id("response-json-node-5")).to_contain_text('"Big"')
    expect(page.get_by_test_id("response-json-node-5")).to_contain_text(_sha256("ada@example.com"))

    # Published and run with amount 150: Big runs, Small (otherwise) is skipped.
    _fit(page)
    konnect_id = ui.publish_flow(page, "Big or small")

    run_email = "grace@example.com"
    ui.post_published(url, {"amount": 150, "email": run_email, "name": "Grace"})
    digest = _sha256(run_email)
    open_task_log(page, konnect_id, digest)
    details = page.get_by_test_id("tasklog-details")
    paths = details.locator("[data-testid^='task-path-']")
    expect(paths).to_have_count(2)
    ran = details.locator("[data-testid^='task-'][data-path='Big']")
    skipped = details.locator("[data-testid^='task-'][data-path='Small']")
    expect(ran.locator("[data-testid^='task-path-']")).to_have_text("Big")
    expect(ran.locator("[data-testid^='task-status-']")).to_have_text("Success")
    expect(ran).to_contain_text(digest)
    expect(skipped.locator("[data-testid^='task-path-']")).to_have_text("Small")
    expect(skipped.locator("[data-testid^='task-status-']")).to_have_text("Skipped")
    expect(skipped.locator("[data-testid^='task-stop-']")).to_contain_text("Small")
    # The router and the join are steps of their own, on no path.
    expect(details.locator("[data-testid^='task-app-']")).to_have_count(4)
    expect(details).not_to_contain_text(_sha256("Grace"))
    print(f"paths in the browser: {time.monotonic() - started:.0f} s")
