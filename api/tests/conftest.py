from __future__ import annotations

import itertools
import mailbox
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from konnectz_api.catalogue import get_index, load_index
from konnectz_api.core import loopguard
from konnectz_api.core.config import get_settings
from konnectz_api.db import get_engine, get_sessionmaker
from konnectz_api.deps import app_settings
from konnectz_api.services import captcha
from konnectz_contracts.nats_auth import API, RUNNER
from konnectz_devstack import fake_apps, testing
from konnectz_devstack._ports import free_port

_counter = itertools.count()


def reset_caches() -> None:
    get_settings.cache_clear()
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()


@pytest.fixture(scope="session")
def api_env(postgres_server, nats_server, smtp_sink) -> dict[str, str]:
    return {
        "KONNECTZ_ENV": "test",
        "KONNECTZ_DATABASE_URL": postgres_server.url,
        **nats_server.env(API),
        "KONNECTZ_SECRET_KEY": "test-secret-key-0123456789abcdef0123456789",
        "KONNECTZ_ENCRYPTION_KEY": "test-encryption-key-0123456789abcdef012345",
        "KONNECTZ_SMTP_PORT": str(smtp_sink.port),
        "KONNECTZ_DEV_MAILDIR": str(smtp_sink.maildir),
        "KONNECTZ_PUBLIC_URL": "http://app.test",
        "KONNECTZ_WEBHOOK_BASE_URL": "http://hooks.test",
        "KONNECTZ_CAPTCHA_COST": "1",
        "KONNECTZ_CAPTCHA_MAX_NUMBER": "50",
        # Every test signs its users up from one client address: the mail limits are tested on their own.
        "KONNECTZ_MAIL_MAX_PER_ADDRESS": "100000",
        "KONNECTZ_MAIL_MAX_PER_EMAIL": "1000",
        # Test & Review calls the tests' local HTTP servers.
        "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8",
        # A synchronous database call on the event loop is refused and fails the test that made it.
        "KONNECTZ_LOOP_GUARD": "raise",
    }


@pytest.fixture(autouse=True)
def nothing_blocked_the_event_loop() -> Iterator[None]:
    """Fails the test during which the api (a route, a dependency, a background task) called the
    synchronous database session on its event loop (konnectz_api.core.loopguard), whatever it answered."""
    start = len(loopguard.VIOLATIONS)
    yield
    found = loopguard.VIOLATIONS[start:]
    assert not found, "a synchronous database call on the event loop:\n" + "\n".join(
        f"{where}\n{stack}" for where, stack in found
    )


@pytest.fixture(scope="session")
def client(api_env) -> Iterator[TestClient]:
    mp = pytest.MonkeyPatch()
    for key, value in api_env.items():
        mp.setenv(key, value)
    reset_caches()
    from konnectz_api.migrate import upgrade

    upgrade()
    from konnectz_api.main import create_app

    with TestClient(create_app()) as c:
        deadline = time.monotonic() + 20
        while c.get("/healthz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        yield c
    mp.undo()
    reset_caches()


def solved_captcha(client: TestClient) -> str:
    return captcha.solve(client.get("/api/v1/captcha/challenge").json())


def mail_to(maildir, email: str) -> list[dict[str, Any]]:
    box = mailbox.Maildir(str(maildir), create=False)
    return [{"subject": m["Subject"], "text": m.get_payload(decode=True).decode()} for m in box if m["To"] == email]


def signup_and_verify(client: TestClient, smtp_sink, email: str | None = None, password: str = "s3cret-pass") -> str:
    email = email or f"user{next(_counter)}-{time.time_ns()}@example.com"
    r = client.post(
        "/api/v1/signup",
        json={
            "email": email,
            "first_name": "Ada",
            "last_name": "L",
            "password": password,
            "password_confirmation": password,
            "is_admin": False,
        },
    )
    assert r.status_code == 201, r.text
    text = mail_to(smtp_sink.maildir, email)[-1]["text"]
    token = re.search(r"/verify-email/(\S+)", text).group(1)
    r = client.post("/api/v1/users/email_confirmation", json={"confirmation_token": token})
    assert r.json()["key"] == "VERIFY_EMAIL_SUCCESS"
    return email


def login(client: TestClient, email: str, password: str = "s3cret-pass") -> dict[str, str]:
    r = client.post(
        "/api/v1/auth/login",
        json={"email": email, "password": password, "rememberMe": False, "captcha": solved_captcha(client)},
    )
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['auth_token']}"}


@pytest.fixture
def user_headers(client, smtp_sink) -> dict[str, str]:
    return login(client, signup_and_verify(client, smtp_sink))


def webhook_canvas(url: str = "https://api.example.com/orders", name: str = "My flow") -> dict[str, Any]:
    return testing.webhook_canvas(url, name=name, headers=[{"key": "X-Source", "value": "konnectz"}])


@dataclass
class OwnedKonnect:
    """A new user's saved konnect; unpacks as ``headers, owner_id, konnect_id`` (``email`` besides)."""

    headers: dict[str, str]
    owner_id: int
    konnect_id: int
    email: str

    def __iter__(self) -> Iterator[Any]:
        return iter((self.headers, self.owner_id, self.konnect_id))


class ApiHelper:
    """Test helpers bound to the session's client and mail sink (importlib mode has no conftest imports)."""

    def __init__(self, client: TestClient, smtp_sink) -> None:
        self.client = client
        self.smtp_sink = smtp_sink

    def solved_captcha(self) -> str:
        return solved_captcha(self.client)

    def mail_to(self, email: str) -> list[dict[str, Any]]:
        return mail_to(self.smtp_sink.maildir, email)

    def signup_and_verify(self, email: str | None = None) -> str:
        return signup_and_verify(self.client, self.smtp_sink, email)

    def login(self, email: str, password: str = "s3cret-pass") -> dict[str, str]:
        return login(self.client, email, password)

    def new_user(self) -> dict[str, str]:
        return self.login(self.signup_and_verify())

    canvas = staticmethod(webhook_canvas)

    def test_trigger(self, headers: dict[str, str], canvas: dict[str, Any]) -> int:
        """Test & Review of the canvas's trigger, as the editor does first: returns the new konnect_id."""
        r = self.client.post(
            "/api/v1/konnects/test_and_review",
            json={"node_id": canvas["apps"][0]["id"], "konnect_id": None, "canvas_json": canvas},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        return int(r.json()["konnect_id"])

    def owner_and_konnect(self) -> OwnedKonnect:
        """A new user (signed up, verified, signed in) with one saved konnect, and the user's id."""
        from sqlalchemy import select

        from konnectz_api.models import User

        email = self.signup_and_verify()
        headers = self.login(email)
        konnect_id = self.save_konnect(headers).json()["konnect_id"]
        with get_sessionmaker()() as s:
            owner_id = s.scalar(select(User.id).where(User.email == email))
        return OwnedKonnect(headers, owner_id, konnect_id, email)

    def save_konnect(self, headers: dict[str, str], canvas: dict[str, Any] | None = None, **body: Any) -> Any:
        """Save a new konnect the way the editor does (trigger tested first); returns the reply."""
        canvas = canvas if canvas is not None else webhook_canvas()
        konnect_id = self.test_trigger(headers, canvas)
        payload = {"canvas_json": canvas, "canvas_name": True, **body, "konnect_id": konnect_id}
        return self.client.post("/api/v1/konnects/save_konnect", json=payload, headers=headers)


@pytest.fixture
def api(client, smtp_sink) -> ApiHelper:
    return ApiHelper(client, smtp_sink)


@pytest.fixture
def fake_provider(client, tmp_path) -> Iterator[Callable[..., fake_apps.FakeApp]]:
    """``fake_provider(oauth_clients=None, edit=None)``: the fake provider of ``konnectz_devstack.fake_apps``
    started, its two apps' manifests written to a folder of the test (``edit(folder)`` may change them
    or add more), and the api reading its catalogue from there, with private networks (127.0.0.0/8)
    allowed and ``oauth_clients`` (when given) as the environment's OAuth clients. The provider is
    stopped and the api's overrides removed after the test."""
    from konnectz_runner.apps import parse_networks

    started: list[fake_apps.FakeApp] = []
    overrides = client.app.dependency_overrides

    def start(
        oauth_clients: dict[str, Any] | None = None, edit: Callable[[Path], None] | None = None
    ) -> fake_apps.FakeApp:
        server = fake_apps.FakeApp().start()
        started.append(server)
        fake_apps.write_manifests(tmp_path, server.url)
        if edit is not None:
            edit(tmp_path)
        index = load_index(extra_dirs=[tmp_path])
        update: dict[str, Any] = {"allow_private_networks": parse_networks("127.0.0.0/8")}
        if oauth_clients is not None:
            update["oauth_clients"] = oauth_clients
        settings = get_settings().model_copy(update=update)
        overrides[get_index] = lambda: index
        overrides[app_settings] = lambda: settings
        return server

    yield start
    overrides.pop(get_index, None)
    overrides.pop(app_settings, None)
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def runner_url(nats_server) -> Iterator[str]:
    """A real runner process (webhook ingress) on the session's NATS."""
    port = free_port()
    env = {
        **os.environ,
        **nats_server.env(RUNNER),
        "KONNECTZ_RUNNER_HOST": "127.0.0.1",
        "KONNECTZ_RUNNER_PORT": str(port),
    }
    proc = subprocess.Popen([sys.executable, "-m", "konnectz_runner", "serve"], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90  # a loaded two-core CI machine
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError(f"the runner did not start within 90 s (exit code {proc.poll()})")
            time.sleep(0.1)
        yield url
    finally:
        testing.stop_process(proc, 90, "the runner")  # it drains its work first (worker.stop: 20 s of grace)
