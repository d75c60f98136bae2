import time

from fastapi.testclient import TestClient

from konnectz_api.core.config import get_settings
from konnectz_api.db import get_engine, get_sessionmaker


def _reset() -> None:
    get_settings.cache_clear()
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()


def test_healthz_ok(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_healthz_503_names_what_is_unreachable(client, monkeypatch):
    from konnectz_devstack import free_port

    monkeypatch.setenv("KONNECTZ_NATS_URL", f"nats://127.0.0.1:{free_port()}")
    monkeypatch.setenv("KONNECTZ_DATABASE_URL", f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/x")
    _reset()
    try:
        from konnectz_api.main import create_app

        with TestClient(create_app()) as c:
            r = c.get("/healthz")
            assert r.status_code == 503
            assert set(r.json()["problems"]) == {"database", "nats"}
            # A request needing the database fails cleanly, not with a hang.
            started = time.monotonic()
            r = c.post("/api/v1/users/user_exists", json={"email": "a@example.com"})
            assert r.status_code == 503 and "database is unavailable" in r.json()["message"]
            assert time.monotonic() - started < 30
    finally:
        monkeypatch.undo()
        _reset()
    assert client.get("/healthz").status_code == 200


def test_dev_mailbox_lists_mail_newest_first(client, api):
    first = api.signup_and_verify()
    second = api.signup_and_verify()
    mails = client.get("/dev/mail.json").json()
    tos = [m["to"] for m in mails]
    assert tos.index(second) < tos.index(first)
    mine = next(m for m in mails if m["to"] == second)
    assert mine["subject"] == "Verify your Konnectz account"
    assert any("/verify-email/" in link for link in mine["links"])
    page = client.get("/dev/mail")
    assert page.status_code == 200 and second in page.text


def test_openapi_document_lists_the_slice(client):
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/v1/signup",
        "/api/v1/auth/login",
        "/api/v1/konnects/save_konnect",
        "/api/v1/konnects/publish_konnect",
        "/api/v1/task_logs/logs",
    ):
        assert path in paths
