"""Bring your own OAuth app, in a real headless Chromium against the real stack.

A fresh install without ``KONNECTZ_OAUTH_CLIENTS`` and without a named administrator: its first (and
only) account holder is not an administrator, since administrators are named by the installer, never
inferred. In the Manage Accounts drawer the owner sees that the app is not configured and who can
configure it and how (KONNECTZ_ADMIN_EMAILS or the admin command); the api refuses their PUT with the
same words. The installer then runs ``python -m konnectz_api admin grant EMAIL`` against the install;
the owner, opening the drawer again, sees the redirect URL to register, enters client id and secret, and
New Account's popup then completes the authorisation against the local fake provider
(``konnectz_devstack.fake_apps``: an http.server with a consent page at /authorize and a token endpoint
checking the client and PKCE, joined to the catalogue); the account is listed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from konnectz_devstack import Platform

pytestmark = pytest.mark.e2e
NewContext = Callable[..., BrowserContext]
OAUTH_APP = 900002


@pytest.fixture(scope="module")
def stack(fake_install: Callable[..., AbstractContextManager[Platform]]) -> Iterator[Platform]:
    """A platform of its own (one account holder, no administrator named), no OAuth client in the environment."""
    with fake_install("konnectz-byo-oauth-e2e-") as platform:
        yield platform


def _admin_command(platform: Platform, *args: str) -> str:
    """``python -m konnectz_api admin ARGS`` run by the installer against the install; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "konnectz_api", "admin", *args],
        env=platform.component_env(),
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout


def test_the_owner_named_by_the_installer_enters_the_oauth_app_and_the_popup_completes(
    new_context: NewContext, stack: Platform, fake: Any, fake_apps: Any, ui: Any
) -> None:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    email = f"owner-{time.time_ns()}@example.com"
    context, headers = ui.signed_in_context(new_context, stack, api, email, "owner-password-1")
    page = context.new_page()

    def open_drawer() -> None:
        page.goto("/applications")
        page.get_by_test_id("applications-search").fill("Fake OA")
        page.get_by_test_id(f"app-card-{OAUTH_APP}").click()
        expect(page.get_by_text("- Manage Accounts")).to_be_visible()

    # The first and only account holder is no administrator: the drawer says who can configure the app.
    open_drawer()
    expect(page.get_by_test_id("oauth-not-configured")).to_contain_text("Ask your administrator")
    who = page.get_by_test_id("oauth-who-can-configure")
    expect(who).to_contain_text("Only an administrator can configure OAuth apps.")
    expect(who).to_contain_text("KONNECTZ_ADMIN_EMAILS")
    expect(who.locator("code")).to_have_text("python -m konnectz_api admin grant <email>")
    expect(page.get_by_test_id("oauth-client-form")).to_have_count(0)
    body = {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}
    refused = api.put(f"/api/v1/admin/oauth_clients/{OAUTH_APP}", json=body, headers=headers)
    assert refused.status_code == 403 and "KONNECTZ_ADMIN_EMAILS" in refused.json()["message"]
    assert _admin_command(stack, "list").startswith("No administrator.")

    # The installer names the owner; the drawer, opened again, has the form and the redirect URL to register.
    assert _admin_command(stack, "grant", email) == f"{email}: administrator\n"
    open_drawer()
    ui.enter_oauth_app(page, "Fake OAuth App", fake_apps.CLIENT_ID, fake_apps.CLIENT_SECRET)
    expect(page.get_by_test_id("oauth-client-settings")).not_to_contain_text(fake_apps.CLIENT_SECRET)
    status = api.get(f"/api/v1/apps/{OAUTH_APP}/oauth_client", headers=headers).json()
    assert status["configured"] and status["source"] == "settings" and status["client_secret"] == "••••••"

    # New Account: the popup goes to the provider's consent page, comes back and closes; the account is listed.
    def at_consent(popup: Page) -> None:
        assert f"client_id={fake_apps.CLIENT_ID}" in popup.url

    ui.connect_through_popup(page, fake.url, on_consent=at_consent)
    token_form = next(r["body"] for r in fake.requests if r["path"] == "/token")
    assert token_form["client_secret"] == fake_apps.CLIENT_SECRET
    (account,) = api.get(f"/api/v1/apps/{OAUTH_APP}/authorized_app_accounts", headers=headers).json()[
        "authorized_app_accounts"
    ]
    assert account["name"] == "Ada at Fake"
