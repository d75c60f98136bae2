"""The account area in a real headless Chromium: team members, avatar upload and removal, the AI pages;
and issue 10's walk (password reset by mail, profile, password, plan page, a Create member refused a
delete, an agency sub-account's run over quota shown as an error task log).

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
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.sync_api import BrowserContext, Page, expect

from konnectz_api.services import captcha
from konnectz_devstack import Platform
from konnectz_devstack.testing import sign_in, sign_in_through_form, wait_until, webhook_canvas
from konnectz_devstack.testing import test_trigger as trigger_konnect_id

pytestmark = pytest.mark.e2e
NewContext = Callable[..., BrowserContext]  # the `new_context` fixture of conftest.py
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-results"


def _signup(platform: Platform, email: str, password: str, plan: str = "Team") -> None:
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
        [sys.executable, "-m", "konnectz_api", "plan", "set", email, plan],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _login(page: Page, email: str, password: str) -> None:
    sign_in_through_form(page, email, password)


def _shot(page: Page, name: str, reopen: Callable[[Page], None] | None = None) -> None:
    """Screenshots in both themes; ``reopen`` brings back what a reload closes (a modal, a toast)."""
    ARTIFACTS.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        page.evaluate(f"localStorage.setItem('konnectz.theme', '{theme}')")
        page.reload()
        page.wait_for_load_state("networkidle")
        if reopen is not None:
            reopen(page)
        page.screenshot(path=str(ARTIFACTS / f"account-{name}-{theme}.png"))
    page.evaluate("localStorage.setItem('konnectz.theme', 'light')")
    page.reload()


def test_members_avatar_and_ai_pages(new_context: NewContext, platform: Platform, tmp_path: Path) -> None:
    if platform.web_dist is None:
        pytest.fail("web/dist is missing: run `make web-build` first")
    email, password = f"owner-{time.time_ns()}@example.com", "owner-password"
    _signup(platform, email, password)
    context = new_context(platform.api_url)
    page = context.new_page()
    # Without an AI host nothing fails in the browser: no console error, no refused widgets call.
    console_errors: list[str] = []
    refused: list[str] = []
    page.on(
        "console",
        lambda m: console_errors.append(f"{m.text} {m.location.get('url', '')}") if m.type == "error" else None,
    )
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    _login(page, email, password)
    expect(page.get_by_test_id("card-premium")).to_be_visible()
    page.wait_for_load_state("networkidle")

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
        expect(page.get_by_test_id("ai-start-command")).to_contain_text("make dev AI=flowise")
    _shot(page, "ai")
    assert not [e for e in console_errors if "widgets" in e or "404" in e], console_errors
    assert not [r for r in refused if "/widgets/" in r], refused
    context.close()


def _mail_link(platform: Platform, email: str, kind: str, seen: int = 0) -> str:
    """The newest ``kind`` link (reset-password, verify-email) mailed to ``email`` after ``seen`` such links."""
    api = httpx.Client(base_url=platform.api_url, timeout=30)

    def links() -> list[str]:
        return [u for m in api.get("/dev/mail.json").json() if m["to"] == email for u in m["links"] if f"/{kind}/" in u]

    found = wait_until(lambda: links() if len(links()) > seen else None, timeout=30, what=f"a {kind} mail")
    return found[-1]


def _choose_password(page: Page, link: str, password: str) -> None:
    """Follow a mailed /reset-password/{token} link in the SPA and set the password; it returns to /login."""
    page.goto("/" + link.split("://", 1)[-1].split("/", 1)[1])  # the link's path, on this test's api
    page.get_by_test_id("reset-password").fill(password)
    page.get_by_test_id("reset-password-confirmation").fill(password)
    page.get_by_test_id("reset-submit").click()
    page.wait_for_url("**/login", timeout=15_000)


def test_reset_profile_password_member_access_and_agency_quota(
    new_context: NewContext, platform: Platform, tmp_path: Path, select_tab
) -> None:
    """Issue 10's walk: forgot password → mail → reset → sign in; profile; password; the plan page;
    a Create member cannot delete a flow; an agency sub-account's run over quota is an error task log."""
    if platform.web_dist is None:
        pytest.fail("web/dist is missing: run `make web-build` first")
    api = httpx.Client(base_url=platform.api_url, timeout=30)
    email, first = f"reset-{time.time_ns()}@example.com", "first-password"
    _signup(platform, email, first)  # Team plan
    context = new_context(platform.api_url)
    page = context.new_page()

    # Forgot password → the mail in the dev mailbox → reset → sign in with the new password.
    page.goto("/login")
    page.get_by_test_id("forgot-password-link").click()
    page.get_by_test_id("forgot-email").fill(email)
    page.get_by_test_id("forgot-submit").click()
    expect(page.get_by_text(f"We sent forgot password link on {email}")).to_be_visible()
    second = "second-password"
    _choose_password(page, _mail_link(platform, email, "reset-password"), second)
    _login(page, email, second)

    # Profile: edit the name; it is kept.
    page.goto("/account/profile")
    page.get_by_test_id("profile-first-name").fill("Olivia")
    page.get_by_test_id("profile-save").click()
    expect(page.get_by_text("Profile updated")).to_be_visible()
    page.reload()
    expect(page.get_by_test_id("profile-first-name")).to_have_value("Olivia")
    _shot(page, "profile")

    # Password: the current one is checked; then signing in takes the new one.
    page.goto("/account/password")
    page.get_by_test_id("password-current").fill(second)
    page.get_by_test_id("password-new").fill("third-password")
    page.get_by_test_id("password-confirmation").fill("third-password")
    page.get_by_test_id("password-save").click()
    expect(page.get_by_text("Password updated")).to_be_visible()
    owner = sign_in(api, email, "third-password")
    stale = {"email": email, "password": second, "rememberMe": False}
    challenge = api.get("/api/v1/captcha/challenge").json()
    assert api.post("/api/v1/auth/login", json={**stale, "captcha": captcha.solve(challenge)}).status_code == 401

    # The plan page: Team shows as 'Complete'.
    page.goto("/account/subscription")
    expect(page.get_by_test_id("subscription-plan")).to_have_text("Complete")
    _shot(page, "subscription")

    # A flow of the owner, and a team member with access Create who cannot delete it.
    canvas = webhook_canvas(f"{platform.api_url}/healthz", name="Owner flow", method="GET", body=[])
    r = api.post(
        "/api/v1/konnects/save_konnect",
        headers=owner,
        json={"konnect_id": trigger_konnect_id(api, owner, canvas), "canvas_name": True, "canvas_json": canvas},
    )
    assert r.status_code == 200, r.text
    flow = r.json()["konnect_id"]
    page.goto("/account/members")
    page.get_by_test_id("member-add").click()
    member_email = f"create-{time.time_ns()}@example.com"
    page.get_by_test_id("member-first-name").fill("Cora")
    page.get_by_test_id("member-last-name").fill("Create")
    page.get_by_test_id("member-email").fill(member_email)
    page.get_by_test_id("member-save").click()
    expect(page.get_by_test_id("team-members").locator("tr", has_text=member_email)).to_contain_text("Create")
    context.close()

    member_ctx = new_context(platform.api_url)
    mpage = member_ctx.new_page()
    _choose_password(mpage, _mail_link(platform, member_email, "reset-password"), "member-password")
    _login(mpage, member_email, "member-password")
    mpage.goto("/flows/home")

    def try_delete(p: Page) -> None:
        expect(p.get_by_text("Owner flow")).to_be_visible()  # the owner's flows, as the level allows
        p.get_by_test_id(f"flow-delete-{flow}").click()
        p.get_by_test_id(f"flow-delete-ok-{flow}").click()
        expect(p.get_by_text("Cannot Delete this Flow")).to_be_visible()

    try_delete(mpage)
    _shot(mpage, "member-delete-refused", try_delete)
    member_ctx.close()
    assert [k["id"] for k in api.get("/api/v1/konnects", headers=owner).json()["konnects"]] == [flow]

    # Agency: a sub-account with a quota of 1 task; its second run is refused and shown as an error log.
    agency_email = f"agency-{time.time_ns()}@example.com"
    _signup(platform, agency_email, "agency-password", plan="Agency")
    actx = new_context(platform.api_url)
    apage = actx.new_page()
    _login(apage, agency_email, "agency-password")
    apage.goto("/account/members")
    expect(apage.get_by_test_id("agency-members")).to_be_visible()
    apage.get_by_test_id("member-add").click()
    sub_email = f"sub-{time.time_ns()}@example.com"
    apage.get_by_test_id("member-first-name").fill("Sub")
    apage.get_by_test_id("member-last-name").fill("Account")
    apage.get_by_test_id("member-email").fill(sub_email)
    apage.get_by_test_id("member-task").fill("1")
    apage.get_by_test_id("member-save").click()
    expect(apage.get_by_test_id("agency-members").locator("tr", has_text=sub_email)).to_be_visible()
    _shot(apage, "agency-members")
    actx.close()

    sctx = new_context(platform.api_url)
    spage = sctx.new_page()
    _choose_password(spage, _mail_link(platform, sub_email, "reset-password"), "sub-password")
    sub = sign_in(api, sub_email, "sub-password")
    canvas = webhook_canvas(f"{platform.api_url}/healthz", name="Quota flow", method="GET", body=[])
    r = api.post(
        "/api/v1/konnects/publish_konnect",
        headers=sub,
        json={"konnect_id": trigger_konnect_id(api, sub, canvas), "canvas_name": True, "canvas_json": canvas},
    )
    assert r.status_code == 200, r.text
    hook, quota_flow = r.json()["webhook_url"], r.json()["konnect_id"]
    wait_until(lambda: httpx.post(hook, json={"n": 1}, timeout=10).status_code == 200, timeout=30)
    assert httpx.post(hook, json={"n": 2}, timeout=10).status_code == 200

    def logs() -> list[dict] | None:
        found = api.get(f"/api/v1/task_logs/logs?konnect_id={quota_flow}", headers=sub).json()["task_logs"]
        return found if len(found) == 2 else None

    assert sorted(t["status"] for t in wait_until(logs, timeout=40)) == ["REFUSED", "SUCCESS"]
    _login(spage, sub_email, "sub-password")
    spage.goto("/flows/home")

    def open_error_log(p: Page) -> None:
        p.get_by_test_id(f"flow-logs-{quota_flow}").click()
        # The Success tab's one log has loaded before the Error tab is chosen (a click during
        # the modal's opening could be lost).
        expect(p.locator("[data-testid^='tasklog-item-']")).to_have_count(1)
        select_tab(p, "Error")
        p.locator("[data-testid^='tasklog-item-']").first.click()
        expect(p.get_by_test_id("tasklog-details")).to_contain_text("Task quota exceeded")

    open_error_log(spage)
    _shot(spage, "quota-error-log", open_error_log)
    sctx.close()
