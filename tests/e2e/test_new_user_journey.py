"""A new user's first journey, in a real headless Chromium against the real stack, once per theme.

Each theme gets a fresh install (its own platform: the first start shows the sign-in screen with its
REGISTER NOW tab). Its installer named the new user an administrator (KONNECTZ_ADMIN_EMAILS), who may
therefore enter OAuth apps: being the first to sign up names nobody.
Through the UI only: sign up, verify the email from the dev mailbox, sign in (the ALTCHA widget
solves its proof of work); in the Manage Accounts drawer of a catalogue app served by a local fake
provider (``konnectz_devstack.fake_apps``) enter its OAuth app (client id and secret) and connect an
account through the provider's consent popup; build Webhook → Filter (priority is high) → the app's
Create Task, test every step, publish; post a passing and a failing input to the webhook and see the
runs labelled "Success" and "Stopped by filter" in the flow's task log and in FLOW HISTORY; open the
live flow in the editor and go back without changes: no save prompt, the flow stays live and its
webhook still runs. Screenshots ``journey-<n>-<stage>-<theme>.png`` go to $KONNECTZ_SCREENSHOTS
(docs/screenshots to refresh the ones docs/journey.md shows).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import sign_in, sign_in_through_form, text_box, wait_until

pytestmark = pytest.mark.e2e
NewContext = Callable[..., BrowserContext]  # the `new_context` fixture of conftest.py
REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("KONNECTZ_SCREENSHOTS") or tempfile.gettempdir() + "/konnectz-screenshots")
ARTIFACTS = REPO / "test-results"
OAUTH_APP = 900002
PASSWORD = "journey-password-1"
SAVE_PROMPT = "Do You Want to Save the Flow?"
THEME_KEY = "konnectz.theme"


def _email(theme: str) -> str:
    """The new user of a theme's journey, whom the installer named an administrator."""
    return f"ada-{theme}@example.com"


@pytest.fixture
def fresh_install(fake_install: Callable[..., AbstractContextManager[Platform]], theme: str) -> Iterator[Platform]:
    """A platform of its own per journey (a fresh install: no user yet, no OAuth client in the
    environment, the journey's user named in KONNECTZ_ADMIN_EMAILS), with the real catalogue, the long
    tail if built, and the fake provider's apps."""
    with fake_install("konnectz-journey-e2e-", admin_emails=[_email(theme)]) as platform:
        yield platform


class Shots:
    """``journey-<n>-<stage>-<theme>.png``, numbered in the order they are taken."""

    def __init__(self, theme: str) -> None:
        self.theme = theme
        self.n = 0
        SHOTS.mkdir(parents=True, exist_ok=True)

    def take(self, page: Page, stage: str) -> None:
        self.n += 1
        expect(page.locator(".ant-message-notice")).to_have_count(0)  # toasts gone (about 3 s)
        page.mouse.move(5, 450)  # no hover state in the picture
        page.wait_for_timeout(500)  # drawer, modal and toast animations
        page.screenshot(path=str(SHOTS / f"journey-{self.n}-{stage}-{self.theme}.png"))


def _post(url: str, body: dict[str, Any]) -> None:
    wait_until(lambda: httpx.post(url, json=body, timeout=10).status_code == 200, timeout=30, what=f"POST {body}")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_new_users_first_flow(
    new_context: NewContext, fresh_install: Platform, fake: Any, theme: str, fake_apps: Any, ui: Any
) -> None:
    started = time.monotonic()
    platform = fresh_install
    shots = Shots(theme)
    context = new_context(platform.api_url)
    # The theme chosen before the first page (the switch stores it; popups share the storage).
    context.add_init_script(f"localStorage.getItem('{THEME_KEY}') || localStorage.setItem('{THEME_KEY}', '{theme}')")
    page = context.new_page()
    email = _email(theme)
    try:
        # 1. First start: the sign-in screen; REGISTER NOW; sign up, verify the email, sign in.
        page.goto("/")
        expect(page.get_by_test_id("login-email")).to_be_visible()
        shots.take(page, "first-start")
        page.get_by_role("tab", name="REGISTER NOW").click()
        page.wait_for_url("**/signup")
        ui.sign_up_through_form(
            page, platform, email, PASSWORD, ("Ada", "Lovelace"), before_submit=lambda: shots.take(page, "sign-up")
        )
        sign_in_through_form(page, email, PASSWORD)
        expect(page.get_by_test_id("stat-total")).to_contain_text("0")
        assert (page.locator(".kz-dark").count() > 0) == (theme == "dark")
        shots.take(page, "dashboard")

        # 2. The app's OAuth app, entered by the user (a named administrator) in Manage Accounts; then an
        # account through the popup.
        page.get_by_test_id("nav-applications").click()
        page.wait_for_url("**/applications")
        page.get_by_test_id("applications-search").fill("Fake OAuth")
        page.get_by_test_id(f"app-card-{OAUTH_APP}").click()
        ui.enter_oauth_app(
            page,
            "Fake OAuth App",
            fake_apps.CLIENT_ID,
            fake_apps.CLIENT_SECRET,
            before_save=lambda: shots.take(page, "oauth-app"),
        )

        def consent_shot(popup: Page) -> None:
            shots.n += 1
            popup.screenshot(path=str(SHOTS / f"journey-{shots.n}-consent-{theme}.png"))

        ui.connect_through_popup(page, fake.url, on_consent=consent_shot)
        shots.take(page, "account-connected")

        # 3. Webhook → Filter → Create Task of the app, each step tested; published.
        page.keyboard.press("Escape")
        page.get_by_test_id("nav-home").click()
        page.wait_for_url("**/dashboard")
        page.get_by_test_id("create-flow").click()
        page.wait_for_url("**/create")
        page.get_by_test_id("trigger-picker-search").fill("web")
        page.get_by_test_id("app-tile-webhook").click()
        page.get_by_test_id("capture-node-1").click()
        url = page.get_by_test_id("webhook-url").inner_text(timeout=30_000).strip()
        assert "/hooks/" in url
        sample = {"title": "Ship the release", "priority": "high"}
        wait_until(lambda: httpx.post(url, json=sample).status_code < 300, timeout=30, what="the draft's webhook URL")
        expect(page.get_by_test_id("status-node-1")).to_have_attribute("data-status", "Success", timeout=30_000)
        expect(page.get_by_test_id("response-node-1")).to_contain_text("priority")

        ui.add_step(page, "add-ons", "conditioner", "fil")
        ui.reference(page, "condition-field-node-2-0", "prio")
        expect(text_box(page, "condition-field-node-2-0")).to_have_value("{{node-1.priority}}")
        ui.choose(page, "condition-operator-node-2-0", "operator-option-Equal To")
        page.get_by_test_id("condition-value-node-2-0").fill("high")
        ui.test_node(page, "node-2")

        ui.add_step(page, "add-action", "fake_oauth", "Fake OAuth")
        ui.choose(page, "event-select-node-3", "event-option-create_task")
        page.get_by_test_id("account-select-node-3").click()
        account = page.locator(".ant-select-dropdown:visible [data-testid^='account-option-']").first
        expect(account).to_contain_text("Ada at Fake")
        account.dispatch_event("click")
        page.get_by_test_id("config-node-3-project").click()
        project = page.locator(".ant-select-dropdown:visible .ant-select-item-option", has_text="Launch")
        expect(project).to_be_visible()  # the options come from the app's API, with the connected account
        project.click()
        expect(text_box(page, "config-node-3-project")).to_have_value("Launch")  # its name; the step stores id 1
        ui.reference(page, "config-node-3-title", "tit")
        expect(text_box(page, "config-node-3-title")).to_have_value("{{node-1.title}}")
        before = len(fake.tasks)
        ui.test_node(page, "node-3")
        assert len(fake.tasks) == before + 1 and fake.tasks[-1]["title"] == "Ship the release", fake.tasks
        assert str(fake.tasks[-1]["project"]) == "1", fake.tasks
        page.get_by_test_id("eagle-eye").click()
        page.get_by_test_id("flow-name").click()
        page.get_by_test_id("flow-name").fill("Urgent requests to tasks")
        shots.take(page, "flow-built")
        page.get_by_test_id("publish-flow").click()
        page.wait_for_url("**/flows/home")
        row = page.locator("[data-testid^='flow-row-']", has_text="Urgent requests to tasks").first
        expect(row).to_be_visible()
        konnect_id = int((row.get_attribute("data-testid") or "").rsplit("-", 1)[1])
        expect(page.get_by_test_id(f"flow-status-{konnect_id}")).to_have_text("Published", timeout=30_000)
        expect(page.get_by_test_id(f"flow-switch-{konnect_id}")).to_have_attribute("aria-checked", "true")

        # 4. One input passes the filter, one fails it: "Success" and "Stopped by filter".
        headers = sign_in(httpx.Client(base_url=platform.api_url, timeout=30), email, PASSWORD)

        def logs() -> list[dict[str, Any]]:
            reply = httpx.get(f"{platform.api_url}/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers)
            return reply.json()["task_logs"]

        before = len(fake.tasks)
        _post(url, {"title": "Fix the login bug", "priority": "high"})
        _post(url, {"title": "Tidy the wiki", "priority": "low"})
        wait_until(lambda: len(logs()) >= 2, timeout=60, what="the two runs' task logs")
        assert [t["title"] for t in fake.tasks[before:]] == ["Fix the login bug"], fake.tasks
        page.reload()
        expect(page.get_by_test_id(f"flow-counts-{konnect_id}-success")).to_have_text("1 success")
        expect(page.get_by_test_id(f"flow-counts-{konnect_id}-filtered")).to_have_text("1 stopped by filter")
        expect(page.get_by_test_id(f"flow-counts-{konnect_id}-error")).to_have_text("0 failed")
        for action in ("edit", "logs", "delete"):  # on screen at 1440 px, with every kind of run counted
            box = page.get_by_test_id(f"flow-{action}-{konnect_id}").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 1440, (action, box)
        copy = page.get_by_test_id(f"flow-webhook-copy-{konnect_id}")  # the URL's Copy stays in its cell
        cell = page.get_by_test_id(f"flow-row-{konnect_id}").locator("td", has=copy).bounding_box()
        box = copy.bounding_box()
        assert box is not None and cell is not None, (box, cell)
        assert box["x"] + box["width"] <= cell["x"] + cell["width"], (box, cell)
        shots.take(page, "runs-counted")

        page.get_by_test_id(f"flow-logs-{konnect_id}").click()
        items = page.locator(".ant-modal:visible [data-testid^='tasklog-item-']")
        expect(items).to_have_count(1)
        expect(items.first.locator("[data-testid^='tasklog-status-']")).to_have_text("Success")
        ui.choose_tab(page, "Stopped by filter")
        expect(items).to_have_count(1)
        status = items.first.locator("[data-testid^='tasklog-status-']")
        expect(status).to_have_text("Stopped by filter")
        expect(status).to_have_attribute("data-status", "FILTERED")
        ui.open_run_details(page, items.first, "Tidy the wiki")
        shots.take(page, "filtered-run")
        page.keyboard.press("Escape")
        expect(page.locator(".ant-modal:visible")).to_have_count(0)

        page.get_by_test_id("nav-history").click()
        page.wait_for_url("**/logs")
        page.get_by_test_id(f"history-open-{konnect_id}").click()
        drawer = page.get_by_test_id("history-drawer")
        expect(drawer.locator("[data-testid^='history-run-status-']")).to_have_count(2)
        expect(drawer.locator("[data-testid^='history-run-status-'][data-status='FILTERED']")).to_have_text(
            "Stopped by filter"
        )
        expect(drawer.locator("[data-testid^='history-run-status-'][data-status='SUCCESS']")).to_have_text("Success")
        shots.take(page, "history")
        page.keyboard.press("Escape")

        # 5. The live flow opened in the editor and left unchanged: no prompt, still live, still runs.
        page.get_by_test_id("nav-flows").click()
        page.wait_for_url("**/flows/home")
        page.get_by_test_id(f"flow-edit-{konnect_id}").click()
        page.wait_for_url(f"**/create/{konnect_id}")
        expect(page.get_by_test_id("editor-live")).to_have_text("Live")
        expect(page.get_by_test_id("node-node-3")).to_contain_text("Create Task")
        expect(page.get_by_test_id("flow-name")).to_have_value("Urgent requests to tasks")
        expect(text_box(page, "config-node-3-project")).to_have_value("Launch")
        page.get_by_test_id("eagle-eye").click()
        shots.take(page, "live-flow")
        page.get_by_test_id("editor-dashboard").click()
        page.wait_for_url("**/flows/home")
        expect(page.get_by_text(SAVE_PROMPT)).to_have_count(0)
        expect(page.get_by_test_id(f"flow-switch-{konnect_id}")).to_have_attribute("aria-checked", "true")
        expect(page.get_by_test_id(f"flow-status-{konnect_id}")).to_have_text("Published")
        expect(page.get_by_test_id(f"flow-pending-{konnect_id}")).to_have_count(0)
        reply = httpx.post(url, json={"title": "Write the release notes", "priority": "high"}, timeout=10)
        assert 200 <= reply.status_code < 300, reply.text
        wait_until(lambda: len(logs()) >= 3, timeout=60, what="the third run's task log")
        assert fake.tasks[-1]["title"] == "Write the release notes", fake.tasks
        page.reload()
        expect(page.get_by_test_id(f"flow-counts-{konnect_id}-success")).to_have_text("2 success")
        expect(page.get_by_test_id(f"flow-switch-{konnect_id}")).to_have_attribute("aria-checked", "true")
        shots.take(page, "still-live")
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"journey-{theme}-last-page.png"))
        print(f"journey ({theme}): {time.monotonic() - started:.0f} s")
