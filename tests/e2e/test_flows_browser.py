"""Browser journey through folders, flows and FLOW HISTORY in Debian's Chromium (Playwright).

Two folders are created and one renamed, three flows are moved into it in bulk, one is found by
search and its task logs are opened, a flow's publish status is switched and another deleted,
the history is filtered by status and date and a detail drawer opened. Screenshots of the
dashboard, flows and history pages in both themes go to test-results/.
"""

from __future__ import annotations

import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest
from playwright.sync_api import Page, expect

from konnectz_api.services import captcha
from konnectz_devstack import Platform
from konnectz_devstack.testing import sign_in_through_form, webhook_canvas

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-results"
PASSWORD = "a-long-password"


def _canvas(name: str) -> dict:
    return webhook_canvas("https://api.example.com/x", name=name)


def _account(platform: Platform) -> tuple[str, dict[str, str]]:
    api = platform.api_url
    email = f"flows-{time.time_ns()}@example.com"
    r = httpx.post(
        f"{api}/api/v1/signup",
        json={
            "email": email,
            "first_name": "Flo",
            "last_name": "W",
            "password": PASSWORD,
            "password_confirmation": PASSWORD,
            "is_admin": False,
        },
    )
    assert r.status_code == 201, r.text
    link = ""
    for _ in range(100):
        link = next(
            (
                u
                for m in httpx.get(f"{api}/dev/mail.json").json()
                if m["to"] == email
                for u in m["links"]
                if "/verify-email/" in u
            ),
            "",
        )
        if link:
            break
        time.sleep(0.2)
    token = link.rsplit("/", 1)[1]
    assert httpx.post(f"{api}/api/v1/users/email_confirmation", json={"confirmation_token": token}).status_code == 200
    solved = captcha.solve(httpx.get(f"{api}/api/v1/captcha/challenge").json())
    r = httpx.post(
        f"{api}/api/v1/auth/login", json={"email": email, "password": PASSWORD, "rememberMe": False, "captcha": solved}
    )
    assert r.status_code == 200, r.text
    return email, {"Authorization": f"Bearer {r.json()['auth_token']}"}


def _seed(platform: Platform, headers: dict[str, str]) -> dict[str, int]:
    api = platform.api_url
    ids = {}
    for name in ["Alpha orders", "Beta orders", "Gamma leads", "Delta sync", "Epsilon cleanup"]:
        tested = httpx.post(  # Test & Review of the trigger creates the konnect, as in the editor
            f"{api}/api/v1/konnects/test_and_review",
            headers=headers,
            json={"node_id": _canvas(name)["apps"][0]["id"], "konnect_id": None, "canvas_json": _canvas(name)},
        )
        assert tested.status_code == 200, tested.text
        r = httpx.post(
            f"{api}/api/v1/konnects/save_konnect",
            headers=headers,
            json={
                "konnect_id": tested.json()["konnect_id"],
                "canvas_name": True,
                "canvas_json": _canvas(name),
                "publish": False,
            },
        )
        assert r.status_code == 200, r.text
        ids[name] = r.json()["konnect_id"]
    owner = httpx.get(f"{api}/api/v1/users/profile", headers=headers).json()["id"]
    now = datetime.now(UTC)
    with psycopg.connect(platform.postgres.dsn, autocommit=True) as conn:
        for status in ("SUCCESS", "SUCCESS", "ERROR"):
            log_id = conn.execute(
                "INSERT INTO task_logs (run_id, owner_id, konnect_id, status, started_at, task_date, data) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb) RETURNING id",
                (uuid.uuid4().hex, owner, ids["Alpha orders"], status, now, now, '{"customer": "Ada"}'),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO tasks (task_log_id, position, step_id, app_name, status, task_date, data) "
                "VALUES (%s, 0, 'node-2', 'API Call', %s, %s, '{\"status\": 201}'::jsonb)",
                (log_id, status, now),
            )
    return ids


def _login(page: Page, email: str) -> None:
    sign_in_through_form(page, email, PASSWORD)


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _folder_id(platform: Platform, headers: dict[str, str], name: str) -> int:
    folders = httpx.get(f"{platform.api_url}/api/v1/folders/list", headers=headers).json()["folders"]
    return next(f["id"] for f in folders if f["name"] == name)


def test_folders_flows_and_history_journey(page: Page, platform: Platform, select_tab) -> None:
    email, headers = _account(platform)
    ids = _seed(platform, headers)
    _login(page, email)

    expect(page.get_by_test_id("stat-total")).to_contain_text("5")
    expect(page.get_by_test_id("recent-flows")).to_contain_text("Epsilon cleanup")
    _shot(page, "flows-dashboard-light.png")

    page.get_by_test_id("nav-flows").click()
    page.wait_for_url("**/flows/home")
    expect(page.get_by_text("No folders available")).to_be_visible()
    for name in ("Sales", "Ops"):
        page.get_by_test_id("folder-add").click()
        page.get_by_test_id("folder-add-input").fill(name)
        page.get_by_test_id("folder-add-submit").click()
        expect(page.get_by_test_id("folder-sidebar")).to_contain_text(name)
    sales = _folder_id(platform, headers, "Sales")
    page.get_by_test_id(f"folder-rename-{sales}").click()
    page.get_by_test_id(f"folder-rename-{sales}-input").fill("Leads")
    page.get_by_test_id(f"folder-rename-{sales}-submit").click()
    expect(page.get_by_text("Folder renamed successfully")).to_be_visible()
    expect(page.get_by_test_id(f"folder-{sales}")).to_contain_text("Leads")

    # Bulk move three flows into Leads: they leave Home.
    moved = [ids["Alpha orders"], ids["Beta orders"], ids["Gamma leads"]]
    for kid in moved:
        page.get_by_test_id(f"flow-row-{kid}").get_by_role("checkbox").check()
    page.get_by_test_id("move-target").click()
    page.locator(".ant-select-item-option[title='Leads']").click()
    page.get_by_test_id("move-flows").click()
    expect(page.get_by_text("Flows moved successfully")).to_be_visible()
    for kid in moved:
        expect(page.get_by_test_id(f"flow-row-{kid}")).to_have_count(0)

    # Switch a flow's publish status on Home.
    delta = ids["Delta sync"]
    page.get_by_test_id(f"flow-switch-{delta}").click()
    expect(page.get_by_test_id(f"flow-status-{delta}")).to_have_text("Published", timeout=30_000)
    # Delete another.
    eps = ids["Epsilon cleanup"]
    page.get_by_test_id(f"flow-delete-{eps}").click()
    page.get_by_test_id(f"flow-delete-ok-{eps}").click()
    expect(page.get_by_text("Deleted", exact=True)).to_be_visible()
    expect(page.get_by_test_id(f"flow-row-{eps}")).to_have_count(0)

    # The folder lists the three; search finds one; its task logs open.
    page.get_by_test_id(f"folder-{sales}").click()
    page.wait_for_url(f"**/flows/{sales}")
    for kid in moved:
        expect(page.get_by_test_id(f"flow-row-{kid}")).to_be_visible()
    page.get_by_test_id("flows-search").fill("alpha")
    expect(page.locator("[data-testid^='flow-row-']")).to_have_count(1)
    alpha = ids["Alpha orders"]
    page.get_by_test_id(f"flow-logs-{alpha}").click()
    page.locator("[data-testid^='tasklog-item-']").first.click()
    expect(page.get_by_test_id("tasklog-details")).to_contain_text("Ada")
    expect(page.get_by_test_id("tasklog-details")).to_contain_text("API Call")
    select_tab(page, "Error")
    expect(page.locator("[data-testid^='tasklog-item-']:visible")).to_have_count(1)
    page.keyboard.press("Escape")
    page.get_by_test_id("flows-search").fill("")
    expect(page.locator("[data-testid^='flow-row-']")).to_have_count(3)
    _shot(page, "flows-flows-light.png")

    # FLOW HISTORY: filter by status Error and today's date, open the drawer.
    page.get_by_test_id("nav-history").click()
    page.wait_for_url("**/logs")
    expect(page.locator("[data-testid^='history-row-']")).to_have_count(4)
    page.get_by_test_id("history-status").click()
    page.locator(".ant-select-item-option[title='Error']").click()
    today = datetime.now().strftime("%Y-%m-%d")
    page.get_by_placeholder("Start Date").fill(today)
    page.get_by_placeholder("Start Date").press("Enter")
    page.get_by_test_id("history-go").click()
    expect(page.locator("[data-testid^='history-row-']")).to_have_count(1)
    expect(page.get_by_test_id(f"history-row-{alpha}")).to_contain_text("Alpha orders")
    page.get_by_test_id(f"history-open-{alpha}").click()
    drawer = page.get_by_test_id("history-drawer")
    expect(drawer).to_contain_text("Alpha orders")
    expect(drawer.locator("[data-testid^='history-log-']")).to_have_count(3)
    _shot(page, "flows-history-light.png")
    page.keyboard.press("Escape")
    page.get_by_test_id("history-clear").click()
    expect(page.locator("[data-testid^='history-row-']")).to_have_count(4)
    expect(page.get_by_text("End of List - No More Flows to Load")).to_be_visible()

    # Dark theme screenshots of the three pages.
    page.get_by_test_id("theme-switch").click()
    _shot(page, "flows-history-dark.png")
    page.get_by_test_id("nav-flows").click()
    expect(page.locator("[data-testid^='flow-row-']")).to_have_count(1)
    _shot(page, "flows-flows-dark.png")
    # Usable at 1280 px: the sidebar, the search, the move controls and every row's actions fit.
    page.set_viewport_size({"width": 1280, "height": 800})
    for test_id in ("folder-add", "flows-search", "move-flows", f"flow-delete-{delta}"):
        box = page.get_by_test_id(test_id).bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280, (test_id, box)
    _shot(page, "flows-flows-dark-1280.png")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_test_id("nav-home").click()
    expect(page.get_by_test_id("stat-total")).to_contain_text("4")
    _shot(page, "flows-dashboard-dark.png")
    assert re.search(r"/dashboard$", page.url)
