"""Apps and app accounts in a real headless Chromium against the real stack.

A local fake app (``konnectz_devstack.fake_apps``: a real HTTP server with an API, an OAuth2 consent
page and token endpoint checking PKCE) joins the catalogue next to the real manifests. Through the
browser: search the applications page, open an app, add a token account (its test request reaches
the fake), rename it, fail to remove it while a published konnect uses it (the spec's message),
remove it after unpublishing; then New Account of an OAuth2 app opens the 800x600 popup, the
provider's consent page grants, the popup completes the authorisation and closes itself, and the
account is listed. A run of a published konnect whose access token the provider no longer accepts
refreshes it through the api (the credential broker) and succeeds. Screenshots in both themes go to
docs/screenshots/.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from konnectz_devstack import Platform
from konnectz_devstack.testing import publish_canvas, wait_until, webhook_node

pytestmark = pytest.mark.e2e
NewContext = Callable[..., BrowserContext]  # the `new_context` fixture of conftest.py
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("KONNECTZ_SCREENSHOTS") or tempfile.gettempdir() + "/konnectz-screenshots")
TOKEN_APP, OAUTH_APP = 900001, 900002
PASSWORD = "apps-password-1"
IN_USE = "Cannot delete this account as it contains active Konnectz"


@pytest.fixture(scope="module")
def stack(fake_install: Callable[..., AbstractContextManager[Platform]], fake_apps: Any) -> Iterator[Platform]:
    """The platform with the real catalogue plus the two fake apps, and the built SPA."""
    clients = {"fake_oauth": {"client_id": fake_apps.CLIENT_ID, "client_secret": fake_apps.CLIENT_SECRET}}
    with fake_install("konnectz-apps-e2e-", oauth_clients=clients) as platform:
        yield platform


def _shots(page: Page, name: str, reopen: Callable[[Page], None] | None = None) -> None:
    """One screenshot per theme (the theme is stored locally; a reload applies it)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for theme in ("light", "dark"):
        page.evaluate(f"localStorage.setItem('konnectz.theme', '{theme}')")
        page.reload()
        page.wait_for_load_state("networkidle")
        if reopen is not None:
            reopen(page)
        page.wait_for_timeout(400)  # drawer and toast animations
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}.png"))
    page.evaluate("localStorage.setItem('konnectz.theme', 'light')")


def _app_node(app_id: int, provider: str, name: str, account: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "node-2",
        "type": "ActionNode",
        "position": {"x": 600, "y": 0},
        "data": {
            "node_id": "node-2",
            "app_detail": {
                "id": app_id,
                "name": name,
                "app_type": "api",
                "provider": provider,
                "app_index": 2,
                "side": "right",
            },
            "selectedEvent": {"id": "create_task", "name": "Create Task"},
            "selectedAccount": account,
            "configResponses": [
                {"config_key": "project", "value": "1"},
                {"config_key": "title", "value": "Order {{node-1.order}}"},
            ],
        },
    }


def _publish(api: httpx.Client, headers: dict[str, str], node: dict[str, Any]) -> dict[str, Any]:
    trigger = webhook_node()
    canvas = {
        "apps": [trigger, node],
        "links": [{"id": "e1", "source": "node-1", "target": "node-2", "sourceHandle": None, "targetHandle": None}],
        "dataForSelect": {},
        "flowName": "Orders to tasks",
    }
    return publish_canvas(api, headers, canvas)


def _run(api: httpx.Client, headers: dict[str, str], published: dict[str, Any], order: str) -> dict[str, Any]:
    """Post to the konnect's webhook; its task log once the run is done."""

    def post() -> bool:
        return httpx.post(published["webhook_url"], json={"order": order}, timeout=10).status_code == 200

    wait_until(post, what="the runner serving the webhook")

    def logs() -> list[dict[str, Any]]:
        reply = api.get(f"/api/v1/task_logs/logs?konnect_id={published['konnect_id']}", headers=headers)
        return [t for t in reply.json()["task_logs"] if t["data"].get("node-1", {}).get("order") == order]

    return wait_until(logs, timeout=60, what="the task log of the run")[0]


def _open_app(page: Page, query: str, app_id: int) -> None:
    page.goto("/applications")
    page.get_by_test_id("applications-search").fill(query)
    page.get_by_test_id(f"app-card-{app_id}").click()
    expect(page.get_by_text("- Manage Accounts")).to_be_visible()


def test_search_add_rename_and_remove_a_token_account(
    new_context: NewContext, stack: Platform, fake: Any, fake_apps: Any, ui: Any
) -> None:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    context, headers = ui.signed_in_context(new_context, stack, api, f"apps-{time.time_ns()}@example.com", PASSWORD)
    page = context.new_page()

    # The applications page: 80 apps at first, the server searches from 2 characters.
    page.goto("/applications")
    search = page.get_by_test_id("applications-search")
    expect(search).to_have_attribute("placeholder", "Search in 1000+ Applications")
    cards = page.locator("[data-testid^=app-card-]")
    expect(cards).to_have_count(80)
    total = api.get("/api/v1/apps?page_size=1", headers=headers).json()["total_apps"]
    assert total > 80
    _shots(page, "applications")
    search.fill("f")  # one character: no server search, the grid stays as it is
    page.wait_for_timeout(600)
    expect(cards).to_have_count(80)
    search.fill("Fake T")
    expect(cards).to_have_count(1)
    card = page.get_by_test_id(f"app-card-{TOKEN_APP}")
    expect(card).to_contain_text("Fake To...")  # names over 9 characters: 7 plus '...'
    # its icon comes from the api (a monogram: the fake app bundles none), no third-party host
    expect(card.locator("img")).to_have_attribute("src", f"/api/v1/apps/{TOKEN_APP}/icon")
    srcs = page.locator("img").evaluate_all("els => els.map(e => new URL(e.src, location.href).host)")
    assert set(srcs) <= {urlsplit(page.url).netloc}

    # Open it: no account yet.
    card.click()
    expect(page.get_by_text("- Manage Accounts")).to_be_visible()
    expect(page.get_by_text("No Account Found.")).to_be_visible()
    expect(page.get_by_text("Please add an account to continue.")).to_be_visible()

    # New Account: the token fields with Add and Cancel; a wrong key fails the app's test request.
    page.get_by_role("button", name="New Account").click()
    form = page.get_by_test_id("token-fields-form")
    form.get_by_label("Api Key").fill("wrong-key")
    form.get_by_role("button", name="Add").click()
    expect(page.locator(".ant-message-error")).to_contain_text("401")
    assert api.get(f"/api/v1/apps/{TOKEN_APP}/authorized_app_accounts", headers=headers).json() == {
        "authorized_app_accounts": []
    }
    form.get_by_label("Api Key").fill(fake_apps.API_KEY)
    form.get_by_role("button", name="Add").click()
    expect(page.get_by_text("Account added successfully")).to_be_visible()
    listed = page.get_by_test_id("accounts-list")
    expect(listed).to_contain_text("Ada at Fak...")  # 'Ada at Fake' (from GET /me) cut beyond 10
    checks = [r for r in fake.requests if r["path"] == "/me"]
    assert checks[-1]["headers"]["X-Api-Key"] == fake_apps.API_KEY
    (account,) = api.get(f"/api/v1/apps/{TOKEN_APP}/authorized_app_accounts", headers=headers).json()[
        "authorized_app_accounts"
    ]
    assert fake_apps.API_KEY not in json.dumps(account)

    # Rename inline.
    listed.get_by_role("button", name="Rename").click()
    box = listed.get_by_role("textbox")
    box.fill("Work")
    box.press("Enter")
    expect(page.get_by_text("Successfully Changed the name of Account")).to_be_visible()
    expect(listed).to_contain_text("Work")
    (account,) = api.get(f"/api/v1/apps/{TOKEN_APP}/authorized_app_accounts", headers=headers).json()[
        "authorized_app_accounts"
    ]
    assert account["name"] == "Work"
    # The account's rate budget (docs/rate-budgets.md): none from the app; the owner sets one.
    summary = listed.get_by_test_id(f"rate-budget-summary-{account['id']}")
    expect(summary).to_have_text("No rate budget - the app sets none")
    listed.get_by_test_id(f"rate-budget-edit-{account['id']}").click()
    rate = listed.get_by_label("Requests per second")
    rate.fill("0")
    listed.get_by_test_id(f"rate-budget-save-{account['id']}").click()
    expect(listed.get_by_test_id(f"rate-budget-error-{account['id']}")).to_contain_text("from 0.01 to 1000")
    rate.fill("2")
    listed.get_by_test_id(f"rate-budget-save-{account['id']}").click()
    expect(summary).to_have_text("2 requests/s - your setting · used 0 in the last minute")
    budget = api.get(f"/api/v1/app_users/{account['id']}/rate_budget", headers=headers).json()
    assert budget["rate_limit_rps"] == 2 and budget["source"] == "override"
    _shots(page, "manage-accounts", reopen=lambda p: _open_app(p, "Fake T", TOKEN_APP))
    # The account badge on the grid.
    page.goto("/applications")
    page.get_by_test_id("applications-search").fill("Fake T")
    expect(page.get_by_test_id(f"app-card-{TOKEN_APP}").locator(".ant-badge-count")).to_have_text("1")

    # A published konnect uses the account: it runs with the account's key, and removal is refused.
    published = _publish(api, headers, _app_node(TOKEN_APP, "fake_token", "Fake Token App", account))
    log = _run(api, headers, published, "A-1")
    assert log["status"] == "SUCCESS", log
    created = [r for r in fake.requests if r["method"] == "POST" and r["path"] == "/tasks"][-1]
    assert created["headers"]["X-Api-Key"] == fake_apps.API_KEY
    assert created["body"]["title"] == "Order A-1"
    assert fake_apps.API_KEY not in json.dumps(log)

    _open_app(page, "Fake T", TOKEN_APP)
    listed = page.get_by_test_id("accounts-list")
    listed.get_by_role("button", name="Remove Work").click()
    page.locator(".ant-popconfirm").get_by_role("button", name="Remove").click()
    expect(page.get_by_text(IN_USE)).to_be_visible()
    expect(listed).to_contain_text("Work")

    # Unpublished, it can go.
    r = api.post(f"/api/v1/konnects/{published['konnect_id']}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200, r.text
    listed.get_by_role("button", name="Remove Work").click()
    page.locator(".ant-popconfirm").get_by_role("button", name="Remove").click()
    expect(page.get_by_text("Account removed")).to_be_visible()
    expect(page.get_by_text("No Account Found.")).to_be_visible()
    assert api.get(f"/api/v1/apps/{TOKEN_APP}/authorized_app_accounts", headers=headers).json() == {
        "authorized_app_accounts": []
    }
    context.close()


def test_oauth_popup_consent_and_a_refresh_during_a_run(
    new_context: NewContext, stack: Platform, fake: Any, ui: Any
) -> None:
    api = httpx.Client(base_url=stack.api_url, timeout=30)
    context, headers = ui.signed_in_context(new_context, stack, api, f"apps-{time.time_ns()}@example.com", PASSWORD)
    page = context.new_page()
    _open_app(page, "Fake OAuth", OAUTH_APP)
    expect(page.get_by_text("No Account Found.")).to_be_visible()

    # New Account: the popup (800x600) goes to the provider's consent page.
    with page.expect_popup() as opened:
        page.get_by_role("button", name="New Account").click()
    popup = opened.value
    popup.wait_for_url(f"{fake.url}/authorize?**")
    assert popup.evaluate("[window.innerWidth, window.innerHeight]") == [800, 600]
    assert "code_challenge_method=S256" in popup.url
    # A second click focuses the open popup instead of opening another one.
    page.get_by_role("button", name="New Account").click()
    page.wait_for_timeout(300)
    assert len(context.pages) == 2
    expect(popup.get_by_text("Konnectz wants to use your Fake account")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    popup.screenshot(path=str(SCREENSHOTS / "oauth-consent.png"))

    # Consent: back to /oauth/response, which completes the authorisation and closes itself.
    with popup.expect_event("close", timeout=30_000):
        popup.locator("#allow").click()
    # The opener polls the popup every 2 s and then reloads the list.
    expect(page.get_by_test_id("accounts-list")).to_contain_text("Ada at Fak...", timeout=10_000)
    grants = [r["body"]["grant_type"] for r in fake.requests if r["path"] == "/token"]
    assert grants[-1] == "authorization_code"
    (account,) = api.get(f"/api/v1/apps/{OAUTH_APP}/authorized_app_accounts", headers=headers).json()[
        "authorized_app_accounts"
    ]

    # A published konnect runs with the account; the provider has dropped every access token it issued,
    # so the first call gets 401, the runner asks the broker for a refreshed token and retries.
    published = _publish(api, headers, _app_node(OAUTH_APP, "fake_oauth", "Fake OAuth App", account))
    fake.tokens.clear()
    before = len([r for r in fake.requests if r["path"] == "/token"])
    log = _run(api, headers, published, "B-7")
    assert log["status"] == "SUCCESS", log
    grants = [r["body"]["grant_type"] for r in fake.requests if r["path"] == "/token"][before:]
    assert grants == ["refresh_token"]
    task_calls = [r for r in fake.requests if r["method"] == "POST" and r["path"] == "/tasks"]
    refused, accepted = task_calls[-2:]
    assert refused["headers"]["Authorization"] != accepted["headers"]["Authorization"]
    assert accepted["headers"]["Authorization"].removeprefix("Bearer ") in fake.tokens
    assert accepted["body"]["title"] == "Order B-7"
    logged = json.dumps(log)
    assert all(token not in logged for token in fake.tokens)
    context.close()
