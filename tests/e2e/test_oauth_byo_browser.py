"""Bring your own OAuth app, in a real headless Chromium against the real stack.

A fresh install without ``KONNECTZ_OAUTH_CLIENTS``: its first (and only) account holder is its
administrator. The local fake provider (``konnectz_devstack.fake_apps``: an http.server with a consent page
at /authorize and a token endpoint checking the client and PKCE) joins the catalogue. In the Manage
Accounts drawer the owner sees that the app is not configured and the redirect URL to register, enters
client id and secret, and New Account's popup then completes the authorisation against the provider;
the account is listed.
"""

from __future__ import annotations

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
def stack(fake_install: Callable[[str], AbstractContextManager[Platform]]) -> Iterator[Platform]:
    """A platform of its own (a single-user install), no OAuth client in the environment."""
    with fake_install("konnectz-byo-oauth-e2e-") as platform:
        yield platform


def test_the_owner_enters_the_oauth_app_and_the_popup_completes(
    new_context: NewContext, stack: Platform, fake: Any, fake_apps: Any, ui: Any
) -> None:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    email = f"owner-{time.time_ns()}@example.com"
    context, headers = ui.signed_in_context(new_context, stack, api, email, "owner-password-1")
    page = context.new_page()

    page.goto("/applications")
    page.get_by_test_id("applications-search").fill("Fake OA")
    page.get_by_test_id(f"app-card-{OAUTH_APP}").click()

    # Not configured: the owner (the single account holder) gets the form and the redirect URL to register.
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
