"""Call a Flow (docs/sub-flows.md) in a real headless Chromium against the real stack (issue 37), by clicks:
a person builds flow B (trigger "Called by a flow or AI tool" with a text and a number input → Formatter
→ Respond answering JSON built from both), tests and publishes it; then flow A (Webhook → Call a Flow
picking B in the flow picker, B's inputs mapped from the webhook's data, "Wait for its result" → API
Call sending the call's result to a local sink), tests and publishes it. A POST to A's webhook: the
sink gets B's answer; the flow history shows the "Called" tag on A's run and "Called by" on B's run,
each linking to the other flow."""

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


class _Sink(JsonHandler):
    """Records the bodies the API Call step sends."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        _Sink.bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}"))
        self._reply(200, {"ok": True})


def _pick(page: Page, select_id: str, title: str) -> None:
    """Open the select ``select_id`` and click its option labelled ``title`` (options without a test id)."""
    page.get_by_test_id(select_id).click()
    option = page.locator(f".ant-select-dropdown:visible .ant-select-item-option[title='{title}']")
    expect(option).to_be_visible()
    option.dispatch_event("click")
    expect(page.get_by_test_id(select_id)).to_contain_text(title)


def _history_run(page: Page, konnect_id: int, tag: str) -> Any:
    """On the flow history, the drawer of flow ``konnect_id`` until its newest run shows a ``tag`` tag
    (task logs are stored after the run ends); that run's list item."""
    run = page.get_by_test_id("history-drawer").locator("[data-testid^='history-log-']").first
    for _ in range(30):
        page.goto("/logs")
        page.get_by_test_id(f"history-open-{konnect_id}").click()
        try:
            expect(run.locator(f"[data-testid^='{tag}-']")).to_be_visible(timeout=2000)
            return run
        except AssertionError:
            continue
    raise AssertionError(f"the history of flow {konnect_id} shows no {tag!r} tag")


def test_a_flow_calls_another_built_by_clicks_and_gets_its_answer(page: Page, platform: Platform, ui) -> None:
    _Sink.bodies = []
    sink = LocalServer(_Sink)
    try:
        # --- flow B: called with a customer (text) and a quantity (number); answers JSON -----------------
        ui.new_flow(page, platform, "callflow")
        page.get_by_test_id("trigger-picker-search").fill("called")
        page.get_by_test_id("app-tile-flow_call").click()
        text_box(page, "flow-call-input-node-1-label-0").fill("Customer")
        page.get_by_test_id("flow-call-input-node-1-add").click()
        text_box(page, "flow-call-input-node-1-label-1").fill("Quantity")
        _pick(page, "flow-call-input-node-1-type-1", "number")
        page.get_by_test_id("flow-call-input-node-1-required-1").check()
        expect(page.get_by_test_id("node-summary-node-1")).to_contain_text("2 inputs")
        # offered as an MCP tool by default: its test needs the description the model reads
        page.get_by_test_id("flow-call-description-node-1").fill("Greets a customer for an order")
        ui.test_node(page, "node-1")
        expect(page.get_by_test_id("response-node-1")).to_contain_text("quantity")

        ui.add_step(page, "add-ons", "formatter", "form")
        ui.choose(page, "addon-node-2-operation", "addon-option-operation-text.title")
        ui.reference(page, "addon-node-2-input", "custom")
        expect(text_box(page, "addon-node-2-input")).to_have_value("{{node-1.customer}}")
        ui.test_node(page, "node-2")

        ui.add_step(page, "add-ons", "respond", "respond")
        ui.choose(page, "event-select-node-3", "event-option-respond")
        body = text_box(page, "config-node-3-body")
        body.fill('{"greeting": "Hello {{node-2.output}}", "quantity": {{node-1.quantity}}}')
        ui.test_node(page, "node-3")
        page.get_by_test_id("response-view-node-3").get_by_text("JSON").click()
        answer = page.get_by_test_id("response-json-node-3")  # the sample inputs: the label, the number 1
        expect(answer).to_contain_text('"body": "{\\"greeting\\": \\"Hello Customer\\", \\"quantity\\": 1}"')
        expect(answer).to_contain_text('"Content-Type": "application/json"')
        callee = ui.publish_flow(page, "Greet a customer")

        # --- flow A: Webhook → Call a Flow (B, waiting) → API Call with B's answer ------------------------
        page.get_by_test_id("create-flow").click()
        page.wait_for_url("**/create")
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        wait_until(
            lambda: httpx.post(url, json={"name": "ada lovelace", "qty": 3}).status_code < 300,
            timeout=30,
            what="the draft's webhook URL",
        )
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)

        ui.add_step(page, "add-ons", "call_flow", "call")
        expect(page.get_by_test_id("node-summary-node-2")).to_have_text("No flow chosen")
        ui.choose(page, "call-flow-flow-node-2", f"call-flow-option-{callee}")
        expect(page.get_by_test_id("call-flow-flow-node-2")).to_contain_text("Greet a customer")
        # B's inputs, as fields of the card once B is picked
        ui.reference(page, "call-flow-input-node-2-customer", "name")
        expect(text_box(page, "call-flow-input-node-2-customer")).to_have_value("{{node-1.name}}")
        ui.reference(page, "call-flow-input-node-2-quantity", "qty")
        expect(text_box(page, "call-flow-input-node-2-quantity")).to_have_value("{{node-1.qty}}")
        _pick(page, "call-flow-mode-node-2", "Go on at once")
        expect(page.get_by_test_id("node-summary-node-2")).to_have_text(f"Flow {callee} · goes on")
        expect(page.get_by_test_id("call-flow-timeout-node-2")).to_have_count(0)
        _pick(page, "call-flow-mode-node-2", "Wait for its result")
        expect(page.get_by_test_id("node-summary-node-2")).to_have_text(f"Flow {callee} · waits")
        page.get_by_test_id("call-flow-timeout-node-2").fill("5")
        _pick(page, "call-flow-unit-node-2", "minutes")
        ui.test_node(page, "node-2")  # checks the call (B, its inputs' rules); starts nothing
        page.get_by_test_id("response-view-node-2").get_by_text("JSON").click()
        shown = page.get_by_test_id("response-json-node-2")
        expect(shown).to_contain_text('"quantity": 3')  # a field that is exactly one reference keeps its type
        expect(shown).to_contain_text("Not started")

        ui.add_step(page, "add-action", "api", "api")
        text_box(page, "api-endpoint-url").fill(f"{sink.url}/answers")
        fields = {
            "greeting": "{{node-2.result.greeting}}",
            "quantity": "{{node-2.result.quantity}}",
            "called_run": "{{node-2.run_id}}",
        }
        for i, (key, value) in enumerate(fields.items()):
            page.get_by_test_id("api-body-add").click()
            text_box(page, f"api-body-key-{i}").fill(key)
            text_box(page, f"api-body-value-{i}").fill(value)
        caller = ui.publish_flow(page, "Order intake")
        assert _Sink.bodies == []  # no test of the API Call ran: the sink hears only the run

        # --- a run: A waits for B, then sends B's answer ---------------------------------------------------
        def posted() -> str | None:
            reply = httpx.post(url, json={"name": "grace hopper", "qty": 4}, timeout=30)
            return reply.json().get("run_id") if reply.status_code == 200 else None

        caller_run = wait_until(posted, timeout=30, what="the published webhook")
        (sent,) = wait_until(lambda: _Sink.bodies, timeout=60, what="the step after the call")
        assert sent["greeting"] == "Hello Grace Hopper" and sent["quantity"] == 4, sent
        called_run = sent["called_run"]
        assert called_run and called_run != caller_run

        # --- the history links both runs -------------------------------------------------------------------
        run = _history_run(page, caller, "calls")
        calls = run.locator(f"[data-testid^='calls-'][data-testid$='-{called_run}']")
        expect(calls).to_have_text(f"Called Greet a customer · run {called_run[:8]}")
        expect(calls.get_by_role("link")).to_have_attribute("href", f"/create/{callee}")
        expect(run.locator("[data-testid^='history-run-status-']")).to_have_text("Success")

        run = _history_run(page, callee, "called-by")
        # one run of B: the Test & Review of the Call a Flow step started none
        expect(page.get_by_test_id("history-drawer").locator("[data-testid^='history-log-']")).to_have_count(1)
        called_by = run.locator("[data-testid^='called-by-']")
        expect(called_by).to_have_text(f"Called by Order intake · run {caller_run[:8]}")
        expect(called_by).to_have_attribute("title", f"Called by run {caller_run} (step node-2)")
        expect(run.locator("[data-testid^='history-run-status-']")).to_have_text("Success")
        called_by.get_by_role("link").click()
        page.wait_for_url(f"**/create/{caller}")
    finally:
        sink.stop()
