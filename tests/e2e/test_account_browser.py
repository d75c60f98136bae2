"""The account area in a real headless Chromium: team members, avatar upload and removal, the AI pages.

An administrator gives the account the Team plan with the documented command; the owner signs in through the
form (the ALTCHA widget solves its proof-of-work), adds a team member with access Create on the Members tab,
uploads and removes an avatar, and opens the three AI pages (no AI host configured: the page says so).
Screenshots in both themes land in test-results/.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect, sync_playwright

from konnectz_devstack import Platform

pytestmark = pytest.mark.e2e
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-results"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Browser:
    if not os.path.exists(CHROMIUM):
        pytest.fail("Chromium is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _signup(platform: Platform, email: str, password: str) -> None:
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    body = {
        "email": email,
        "first_name": "Olive",
        "last_name": "Owner",
        "password": password,
        "password_confirmation": password,
        "is_admin": False,
    }
    assert api.post("/api/v1/signup", json=body).status_code == 201
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        links = [u for m in api.get("/dev/mail.json").json() if m["to"] == email for u in m["links"]]
        if links:
            token = links[0].rsplit("/", 1)[1]
            api.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
            break
        time.sleep(0.2)
    env = {**os.environ, **platform.component_env()}
    subprocess.run(
        [sys.executable, "-m", "konnectz_api", "plan", "set", email, "Team"],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _login(page: Page, email: str, password: str) -> None:
    page.goto("/login")
    page.get_by_test_id("login-email").fill(email)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-captcha").get_by_text("I'm not a robot").click()
    expect(
        page.locator("altcha-widget [data-state=verified], altcha-widget .altcha[data-state=verified]")
    ).to_have_count(1, timeout=60_000)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url("**/dashboard")


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        page.evaluate(f"localStorage.setItem('konnectz.theme', '{theme}')")
        page.reload()
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(ARTIFACTS / f"account-{name}-{theme}.png"))
    page.evaluate("localStorage.setItem('konnectz.theme', 'light')")
    page.reload()


def test_members_avatar_and_ai_pages(browser: Browser, platform: Platform, tmp_path: Path) -> None:
    if platform.web_dist is None:
        pytest.fail("web/dist is missing: run `make web-build` first")
    email, password = f"owner-{time.time_ns()}@example.com", "owner-password"
    _signup(platform, email, password)
    context = browser.new_context(base_url=platform.api_url, viewport={"width": 1440, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    _login(page, email, password)

    # Members: add a team member with access Create.
    page.goto("/account/members")
    expect(page.get_by_test_id("team-members")).to_be_visible()
    page.get_by_test_id("member-add").click()
    page.get_by_test_id("member-first-name").fill("Cora")
    page.get_by_test_id("member-last-name").fill("Create")
    member_email = f"member-{time.time_ns()}@example.com"
    page.get_by_test_id("member-email").fill(member_email)
    page.get_by_test_id("member-save").click()
    row = page.get_by_test_id("team-members").locator("tr", has_text=member_email)
    expect(row).to_contain_text("Create")
    _shot(page, "members")

    # Avatar: without a file the tab says so; upload, see it served; remove it.
    page.goto("/account/avatar")
    page.get_by_test_id("avatar-upload").click()
    expect(page.get_by_text("Select the image before uploading.")).to_be_visible()
    picture = tmp_path / "me.jpg"
    Image.new("RGB", (800, 600), (20, 120, 220)).save(picture, format="JPEG")
    page.get_by_test_id("avatar-file").set_input_files(str(picture))
    page.get_by_test_id("avatar-upload").click()
    expect(page.get_by_text("Picture updated")).to_be_visible()
    img = page.get_by_test_id("avatar-image").locator("img")
    expect(img).to_have_attribute("src", re.compile(r"/api/v1/avatars/.+\.png$"))
    served = httpx.get(img.get_attribute("src"), timeout=10)
    with Image.open(io.BytesIO(served.content)) as im:
        assert im.format == "PNG" and im.size == (512, 384)
    _shot(page, "avatar")
    page.get_by_test_id("avatar-remove").click()
    expect(page.get_by_text("Picture removed")).to_be_visible()
    expect(page.get_by_test_id("avatar-image").locator("img")).to_have_count(0)

    # The AI pages: no AI host configured here, and the page says so plainly.
    for path, title in (("/chatflows", "Chatflows"), ("/agentflows", "Agentflows"), ("/tools", "Tools")):
        page.goto(path)
        expect(page.locator("h3", has_text=title).first).to_be_visible()
        expect(page.get_by_test_id("ai-not-configured")).to_contain_text("No AI host is configured")
        expect(page.get_by_text("Coming soon")).to_have_count(0)
    _shot(page, "ai")
    context.close()
