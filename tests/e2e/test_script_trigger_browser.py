"""A custom-script trigger in a real headless Chromium against the real stack, by clicks and typing.

A catalogue app whose trigger is fed by a script the user installs in the app (like Google Forms'
New Form Response): its Test & Review opens the script-triggers page in a popup, which shows the
script with the konnect's webhook URL; the "script" (this test) posts a response there, the page
turns RECEIVED, the popup is closed, and the editor tests the trigger again to take the response as
the trigger's data. A Data forwarder maps it, the flow is published, run by the next response, and
its task log seen. The popup is photographed in both themes.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import BrowserContext, expect
from playwright.sync_api import Error as PlaywrightError

from konnectz_devstack import Platform
from konnectz_devstack.pytest_plugin import make_platform
from konnectz_devstack.testing import text_box, wait_until

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("KONNECTZ_SCREENSHOTS") or tempfile.gettempdir() + "/konnectz-screenshots")
ARTIFACTS = REPO / "test-results"
PASSWORD = "a-long-password"
NewContext = Callable[..., BrowserContext]  # the `new_context` fixture of conftest.py

MANIFEST = """
id: 990002
key: mockforms
name: Mock Forms
description: A form app whose responses reach flows through a script (like Google Forms).
source: {kind: curated}
categories: [Testing]
base_url: "http://127.0.0.1:9"
events:
  - key: new_response
    kind: trigger
    label: New Form Response
    operation: {method: GET, path: "/forms/{formId}/responses"}
    fields:
      - {key: formId, label: Form ID, location: path, required: true}
    output: {sample: {answers: {Name: Ada}}}
    trigger:
      type: script
      platform: Mock Script
      install:
        - Open the form's script editor.
        - Paste the script below and run install.
      source: |
        function onSubmit(e) {
          UrlFetchApp.fetch('{{webhook_url}}', {method: 'post', payload: JSON.stringify(e)});
        }
"""


@pytest.fixture(scope="module")
def forms_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The platform with a catalogue that also holds Mock Forms (a custom-script trigger)."""
    root = tmp_path_factory.mktemp("catalogue")
    shutil.copytree(REPO / "catalogue", root, dirs_exist_ok=True)
    (root / "apps" / "mockforms.yaml").write_text(MANIFEST)
    plat = make_platform(tmp_path_factory.mktemp("forms-platform"), KONNECTZ_CATALOGUE_DIR=str(root))
    plat.web_dist = REPO / "web" / "dist"
    if not (plat.web_dist / "index.html").exists():
        pytest.fail("web/dist is missing: run `make web-build` first (make test does)")
    plat.start()
    yield plat
    plat.stop()


def test_a_custom_script_trigger_from_popup_to_task_log(
    new_context: NewContext, forms_platform: Platform, open_task_log, ui
) -> None:
    platform = forms_platform
    context = new_context(platform.api_url, width=1600, height=1000)
    page = context.new_page()
    try:
        ui.new_flow(page, platform, "script", PASSWORD)
        page.get_by_test_id("trigger-picker-search").fill("mock f")
        page.get_by_test_id("app-tile-mockforms").click()
        page.get_by_test_id("event-select-node-1").click()
        option = page.locator(".ant-select-dropdown:visible [data-testid='event-option-new_response']")
        expect(option).to_be_visible()
        option.dispatch_event("click")
        text_box(page, "config-node-1-formId").fill("form-123")

        page.get_by_test_id("node-test-node-1").click()
        with context.expect_page() as opened:
            page.get_by_test_id("trigger-test-proceed-node-1").click()
        popup = opened.value
        popup.wait_for_load_state()
        assert re.search(r"/script-triggers/\d+$", popup.url), popup.url
        expect(page.get_by_test_id("script-open-node-1")).to_be_visible()
        source = popup.get_by_test_id("script-source")
        expect(source).to_contain_text("/hooks/")
        expect(popup.get_by_test_id("script-status")).to_have_text("WAITING")
        hook = re.search(r"'(http[^']+/hooks/[^']+)'", source.inner_text())
        assert hook is not None, source.inner_text()
        url = hook.group(1)

        # The installed script posts a response; the page (polling every 3 s) shows it received.
        wait_until(
            lambda: httpx.post(url, json={"answers": {"Name": "Ada"}}).status_code < 300, timeout=20, what="hook"
        )
        expect(popup.get_by_test_id("script-status")).to_have_text("RECEIVED", timeout=30_000)
        expect(popup.get_by_test_id("script-received")).to_contain_text("Ada")
        SHOTS.mkdir(parents=True, exist_ok=True)
        for theme in ("light", "dark"):
            # The popup has no theme switch: it follows the theme stored by the editor.
            popup.evaluate("mode => localStorage.setItem('konnectz.theme', mode)", theme)
            popup.reload()
            expect(popup.get_by_test_id("script-status")).to_have_text("RECEIVED")
            popup.screenshot(path=str(SHOTS / f"script-trigger-popup-{theme}.png"))
        try:
            popup.get_by_test_id("script-close").click()
        except PlaywrightError:  # the button closes its own window, at times before click() returns
            pass
        wait_until(popup.is_closed, timeout=10, what="the popup closed")

        # The editor notices the closed popup within a second, resets the flag and tests again.
        expect(page.get_by_test_id("script-open-node-1")).to_have_count(0, timeout=10_000)
        expect(page.get_by_test_id("response-node-1")).to_contain_text("answers.Name", timeout=20_000)
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success")

        page.get_by_test_id("add-ons").click()
        page.get_by_test_id("action-drawer-search").fill("data")
        page.locator(".ant-drawer:visible [data-testid='app-tile-data_forwarder']").first.click()
        page.wait_for_timeout(400)
        text_box(page, "forward-key-node-2-key-0").fill("name")
        text_box(page, "forward-key-node-2-value-0").fill("{{node-1.answers.Name}}")
        page.get_by_test_id("node-test-node-2").click()
        expect(page.get_by_test_id("status-node-2")).to_have_attribute("data-status", "Success", timeout=30_000)

        konnect_id = ui.publish_flow(page, "Form answers")

        # Published, the trigger is the webhook the script posts to: the next response runs the flow.
        wait_until(
            lambda: httpx.post(url, json={"answers": {"Name": "Grace"}}).status_code == 200, timeout=30, what="run"
        )
        open_task_log(page, konnect_id, "Grace")
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "script-trigger-last-page.png"))
        context.close()
