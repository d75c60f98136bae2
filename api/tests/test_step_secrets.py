"""Secrets typed into steps, through the api on real PostgreSQL and NATS and a local HTTP server.

The owner and a team member read the mask, never the value (no route gives it back); Test & Review
sends the real value; a secret goes only to the origin it was typed for; an envelope a client sends
is never trusted; the runner's broker opens values sealed for its konnect only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from konnectz_api.core.config import get_settings
from konnectz_api.crud import quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.step_secrets import MASK, SECRET_NAME_PARTS, SECRET_NAMES, is_default_secret
from konnectz_contracts.broker_token import konnect_token
from konnectz_devstack.fake_apps import JsonHandler, LocalServer
from konnectz_devstack.testing import webhook_canvas

SECRET = "Bearer tok-4f9d2c7a1e8b"


class Echo:
    """A local API: records each request's headers and path."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append({"path": self.path, "headers": dict(self.headers)})
                self._reply(200, {"ok": True})

        self.server = LocalServer(Handler)
        self.url = self.server.url


@pytest.fixture(scope="module")
def echo() -> Iterator[Echo]:
    e = Echo()
    yield e
    e.server.stop()


def _canvas(url: str, value: str = SECRET, **extra: Any) -> dict[str, Any]:
    return webhook_canvas(f"{url}/hook", headers=[{"key": "Authorization", "value": value, "secret": True, **extra}])


def _row(canvas: dict[str, Any]) -> dict[str, Any]:
    return canvas["apps"][1]["data"]["selectedValue"]["apiDetails"]["headers"][0]


def _stored(postgres_server, konnect_id: int) -> dict[str, Any]:
    with psycopg.connect(postgres_server.dsn) as db:
        (canvas,) = db.execute("SELECT canvas_json FROM konnects WHERE id = %s", (konnect_id,)).fetchone()
    return canvas


def _member(client, api, owner_email: str, owner: dict[str, str], access: str) -> dict[str, str]:
    email = f"{access.replace('/', '-').lower()}-{owner_email}"
    r = client.post(
        "/api/v1/members/add_team_user", json={"email": email, "first_name": "M", "access": access}, headers=owner
    )
    assert r.status_code == 200, r.text
    token = re.search(r"/reset-password/(\S+)", api.mail_to(email)[-1]["text"]).group(1)
    body = {"reset_password_token": token, "password": "member-pass-1", "password_confirmation": "member-pass-1"}
    assert client.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return api.login(email, "member-pass-1")


def _test_api_node(client, headers, konnect_id: int, canvas: dict[str, Any]) -> Any:
    return client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": "node-2", "konnect_id": konnect_id, "canvas_json": canvas},
        headers=headers,
    )


def test_owner_and_members_read_the_mask_and_test_and_review_sends_the_value(client, api, echo, postgres_server):
    owner_email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        quota.set_plan(s, email=owner_email, plan="Team")
    owner = api.login(owner_email)
    konnect_id = api.test_trigger(owner, _canvas(echo.url))

    stored = _stored(postgres_server, konnect_id)
    assert SECRET not in json.dumps(stored) and "tok-4f9d" not in json.dumps(stored)
    sealed = _row(stored)["sealed"]
    assert re.fullmatch(r"[0-9a-f]{12}:[A-Za-z0-9_=-]+", sealed)  # the credential cipher's format

    create = _member(client, api, owner_email, owner, "Create")
    full = _member(client, api, owner_email, owner, "FULL")
    for who in (owner, create, full):
        edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=who).json()
        assert _row(edit["canvas_json"]) == {"key": "Authorization", "value": MASK, "secret": True}
        assert SECRET not in json.dumps(edit) and sealed not in json.dumps(edit)

    # A member saves what the editor shows: the stored secret is kept, not replaced by the mask.
    shown = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=create).json()["canvas_json"]
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": shown},
        headers=create,
    )
    assert r.status_code == 200, r.text
    assert _row(_stored(postgres_server, konnect_id))["sealed"] == sealed

    # Test & Review of the API Call sends the real value; its reply and stored result do not show it.
    r = _test_api_node(client, create, konnect_id, shown)
    assert r.status_code == 200 and r.json()["test_status"] == "Success", r.text
    assert echo.requests[-1]["headers"]["Authorization"] == SECRET
    assert SECRET not in r.text
    with psycopg.connect(postgres_server.dsn) as db:
        activities = db.execute(
            "SELECT coalesce(string_agg(a::text, ''), '') FROM konnect_activities a WHERE konnect_id = %s",
            (konnect_id,),
        ).fetchone()[0]
    assert "Authorization" in activities and SECRET not in activities

    # Turning the lock off on a listed name changes nothing: Authorization is always secret, so the
    # mask keeps the stored secret and the reply says the row was sealed by its name.
    off = json.loads(json.dumps(shown))
    _row(off)["secret"] = False
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": off},
        headers=create,
    )
    assert r.status_code == 200, r.text
    assert _row(_stored(postgres_server, konnect_id)) == {
        "key": "Authorization",
        "value": "",
        "secret": True,
        "sealed": sealed,
    }
    assert r.json()["sealed_by_name"] == ["node-2 headers Authorization"]
    r = _test_api_node(client, create, konnect_id, off)
    assert r.status_code == 200 and r.json()["test_status"] == "Success", r.text
    assert echo.requests[-1]["headers"]["Authorization"] == SECRET and SECRET not in r.text


def test_unlocking_a_name_the_user_chose_does_not_reveal_its_value(client, api, echo, postgres_server):
    owner = api.new_user()
    canvas = webhook_canvas(f"{echo.url}/hook", headers=[{"key": "X-Signature", "value": "sig-7d1e", "secret": True}])
    konnect_id = api.test_trigger(owner, canvas)
    assert _row(_stored(postgres_server, konnect_id))["sealed"]
    shown = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=owner).json()["canvas_json"]
    assert _row(shown) == {"key": "X-Signature", "value": MASK, "secret": True}

    # Turning the lock off on a masked row does not reveal the value: the mask is all it has.
    _row(shown)["secret"] = False
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": shown},
        headers=owner,
    )
    assert r.status_code == 200 and r.json()["sealed_by_name"] == [], r.text
    assert _row(_stored(postgres_server, konnect_id)) == {"key": "X-Signature", "value": MASK, "secret": False}
    before = len(echo.requests)
    r = _test_api_node(client, owner, konnect_id, shown)
    assert r.status_code == 200 and "sig-7d1e" not in r.text
    assert all(req["headers"].get("X-Signature") != "sig-7d1e" for req in echo.requests[before:])


API_KEY = "key-0b9e8d7c6a5f"


def _unlocked(url: str, authorization: str = SECRET, api_key: str = API_KEY) -> dict[str, Any]:
    """An API Call whose Authorization header and api_key parameter are sent with ``secret: false``
    (a client that turned the lock off, or an old editor), beside a plain X-Order header."""
    return webhook_canvas(
        f"{url}/hook",
        headers=[
            {"key": "Authorization", "value": authorization, "secret": False},
            {"key": "X-Order", "value": "A-1", "secret": False},
        ],
        params=[{"key": "api_key", "value": api_key}],
    )


def _rows(canvas: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    details = canvas["apps"][1]["data"]["selectedValue"]["apiDetails"]
    return {"headers": details["headers"], "params": details["params"]}


BY_NAME = ["node-2 headers Authorization", "node-2 params api_key"]


def test_a_listed_name_is_sealed_whatever_the_client_sends(client, api, echo, postgres_server):
    owner_email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        quota.set_plan(s, email=owner_email, plan="Team")
    owner = api.login(owner_email)
    canvas = _unlocked(echo.url)

    # The trigger's first test stores the draft: sealed already, and the reply says which rows by name.
    r = client.post(
        "/api/v1/konnects/test_and_review",
        json={"node_id": "node-1", "konnect_id": None, "canvas_json": canvas},
        headers=owner,
    )
    assert r.status_code == 200, r.text
    konnect_id = r.json()["konnect_id"]
    first = _rows(_stored(postgres_server, konnect_id))
    assert SECRET not in json.dumps(first) and API_KEY not in json.dumps(first)
    assert r.json()["sealed_by_name"] == BY_NAME

    # Save with secret: false: stored encrypted and marked secret, the reply names the rows.
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        headers=owner,
    )
    assert r.status_code == 200, r.text
    stored = _stored(postgres_server, konnect_id)
    assert SECRET not in json.dumps(stored) and "tok-4f9d" not in json.dumps(stored)
    assert API_KEY not in json.dumps(stored)
    rows = _rows(stored)
    for row in (rows["headers"][0], rows["params"][0]):
        assert row["secret"] is True and row["value"] == ""
        assert re.fullmatch(r"[0-9a-f]{12}:[A-Za-z0-9_=-]+", row["sealed"])  # the credential cipher's format
    assert rows["headers"][1] == {"key": "X-Order", "value": "A-1", "secret": False}
    assert r.json()["sealed_by_name"] == BY_NAME

    # Every reader (the owner, a member) gets secret: true and the mask: the editor shows the lock.
    member = _member(client, api, owner_email, owner, "Create")
    for who in (owner, member):
        edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=who).json()
        shown = _rows(edit["canvas_json"])
        assert shown["headers"][0] == {"key": "Authorization", "value": MASK, "secret": True}
        assert shown["params"][0] == {"key": "api_key", "value": MASK, "secret": True}
        assert shown["headers"][1] == {"key": "X-Order", "value": "A-1", "secret": False}
        assert SECRET not in json.dumps(edit) and API_KEY not in json.dumps(edit) and "sealed" not in json.dumps(edit)

    # Test & Review uses the real values: of what the editor shows (the mask) and of what the client
    # typed with secret: false (sealed again first, the reply names the rows); the reply shows neither.
    for sent, by_name in ((edit["canvas_json"], []), (canvas, BY_NAME)):
        r = _test_api_node(client, owner, konnect_id, sent)
        assert r.status_code == 200 and r.json()["test_status"] == "Success", r.text
        assert r.json()["sealed_by_name"] == by_name
        assert echo.requests[-1]["headers"]["Authorization"] == SECRET
        assert echo.requests[-1]["path"] == f"/hook?api_key={API_KEY}"
        assert SECRET not in r.text and API_KEY not in r.text
        assert SECRET not in json.dumps(_stored(postgres_server, konnect_id))

    # Publishing with secret: false: the published spec carries the envelopes, never the values.
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas},
        headers=owner,
    )
    assert r.status_code == 200 and r.json()["sealed_by_name"] == BY_NAME, r.text
    with psycopg.connect(postgres_server.dsn) as db:
        (spec,) = db.execute("SELECT published_spec FROM konnects WHERE id = %s", (konnect_id,)).fetchone()
    step = spec["steps"][0]
    assert step["headers"][0]["key"] == "Authorization" and step["headers"][0]["sealed"]
    assert step["params"][0]["key"] == "api_key" and step["params"][0]["sealed"]
    assert SECRET not in json.dumps(spec) and API_KEY not in json.dumps(spec)

    # delete_activity with the canvas (a node deleted on the canvas) seals by name too.
    r = client.post(
        "/api/v1//konnects/delete_activity",
        json={"konnect_id": konnect_id, "nodeId": "node-2", "canvas_json": canvas},
        headers=owner,
    )
    assert r.status_code == 200 and r.json()["sealed_by_name"] == BY_NAME, r.text
    assert SECRET not in json.dumps(_stored(postgres_server, konnect_id))


def test_a_listed_name_stored_in_plain_text_is_masked_and_sealed_on_the_next_save(client, api, echo, postgres_server):
    """A row stored before listed names were always secret (or imported from the cluster)."""
    owner = api.new_user()
    konnect_id = api.test_trigger(owner, api.canvas(f"{echo.url}/hook"))
    with psycopg.connect(postgres_server.dsn) as db:
        db.execute(
            "UPDATE konnects SET canvas_json = %s WHERE id = %s",
            (json.dumps(_unlocked(echo.url)), konnect_id),
        )
    edit = client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=owner).json()
    shown = _rows(edit["canvas_json"])
    assert shown["headers"][0] == {"key": "Authorization", "value": MASK, "secret": True}
    assert shown["params"][0] == {"key": "api_key", "value": MASK, "secret": True}
    assert SECRET not in json.dumps(edit) and API_KEY not in json.dumps(edit)

    # Saving what the editor shows (the mask) seals the stored values for the step's own origin.
    r = client.post(
        "/api/v1/konnects/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": edit["canvas_json"]},
        headers=owner,
    )
    assert r.status_code == 200 and r.json()["sealed_by_name"] == [], r.text
    stored = _rows(_stored(postgres_server, konnect_id))
    assert stored["headers"][0]["sealed"] and stored["params"][0]["sealed"]
    assert SECRET not in json.dumps(stored) and API_KEY not in json.dumps(stored)
    r = _test_api_node(client, owner, konnect_id, edit["canvas_json"])
    assert r.status_code == 200 and r.json()["test_status"] == "Success", r.text
    assert echo.requests[-1]["headers"]["Authorization"] == SECRET
    assert echo.requests[-1]["path"] == f"/hook?api_key={API_KEY}"


def test_a_secret_goes_only_to_its_origin_and_a_sent_envelope_is_not_trusted(client, api, echo, postgres_server):
    owner = api.new_user()
    konnect_id = api.test_trigger(owner, _canvas(echo.url))
    sealed = _row(_stored(postgres_server, konnect_id))["sealed"]

    # Another host with the mask: the test refuses to send the secret there.
    elsewhere = _canvas(echo.url.replace("127.0.0.1", "127.0.0.2"), MASK)
    before = len(echo.requests)
    r = _test_api_node(client, owner, konnect_id, elsewhere)
    assert r.json()["test_status"] == "Error", r.text
    assert "was typed for http://127.0.0.1:" in r.json()["display_message"]
    assert len(echo.requests) == before

    # A copied envelope in another konnect is dropped: the row has no value there.
    other = api.test_trigger(owner, _canvas(echo.url, MASK, sealed=sealed))
    assert "sealed" not in _row(_stored(postgres_server, other))
    r = client.post(
        "/api/v1/konnects/publish_konnect",
        json={"konnect_id": other, "canvas_json": _canvas(echo.url, MASK, sealed=sealed)},
        headers=owner,
    )
    assert r.status_code == 422 and "secret header 'Authorization' has no value" in r.json()["message"]


def test_the_broker_opens_secrets_of_its_konnect_only(client, api, echo, postgres_server):
    owner = api.new_user()
    first = api.test_trigger(owner, _canvas(echo.url))
    second = api.test_trigger(owner, _canvas(echo.url, "other"))
    sealed = _row(_stored(postgres_server, first))["sealed"]
    key = get_settings().runner_credentials_key

    def ask(konnect_id: int, token: str | None) -> Any:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        return client.post(
            "/api/v1/internal/step_secrets", json={"konnect_id": konnect_id, "sealed": [sealed]}, headers=auth
        )

    assert ask(first, None).status_code == 401
    assert ask(first, konnect_token(key, second, "")).status_code == 401
    assert ask(second, konnect_token(key, second, "")).status_code == 403  # sealed for the first konnect
    r = ask(first, konnect_token(key, first, ""))
    assert r.status_code == 200
    assert r.json() == {"secrets": [{"value": SECRET, "origin": echo.url}]}


def test_the_default_secret_names_are_one_list_served_to_the_editor(client):
    r = client.get("/api/v1/konnects/secret_names")
    assert r.json() == {"names": list(SECRET_NAMES), "name_parts": list(SECRET_NAME_PARTS), "mask": MASK}
    for name in ("Authorization", "X-API-Key", "Set-Cookie", "X-Auth-Token", "X-Refresh-Token", "DB_PASSWORD"):
        assert is_default_secret(name), name
    for name in ("Content-Type", "X-Order", "Accept"):
        assert not is_default_secret(name), name
