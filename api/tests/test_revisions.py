"""Revisions: every publish kept unchanged and numbered; list, read, restore (a new revision), retention,
team members' access, clear 404/409/422 replies, and the revision a run executed on its task log."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import nats
from sqlalchemy import select

from konnectz_api.core.config import get_settings
from konnectz_api.crud import quota
from konnectz_api.crud import revisions as crud
from konnectz_api.db import get_sessionmaker
from konnectz_api.deps import app_settings
from konnectz_api.models import Konnect, KonnectRevision, User
from konnectz_api.services.task_events import store_event
from konnectz_contracts.events import KV_KONNECTS, TaskEvent, konnect_key

K = "/api/v1/konnects"
V1 = "https://api.example.com/v1/orders"
V2 = "https://api.example.com/v2/orders"
V3 = "https://api.example.com/v3/orders"


def _publish(client, api, headers, url: str, konnect_id: int | None = None, **body: Any) -> dict[str, Any]:
    canvas = api.canvas(url=url)
    if konnect_id is None:
        konnect_id = api.test_trigger(headers, canvas)
    r = client.post(
        f"{K}/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas, **body},
        headers=headers,
    )
    assert r.status_code == 200, r.text
    return r.json()


def _live_spec(nats_url: str, konnect_id: int) -> dict[str, Any] | None:
    async def run() -> dict[str, Any] | None:
        nc = await nats.connect(nats_url)
        try:
            kv = await nc.jetstream().key_value(KV_KONNECTS)
            try:
                entry = await kv.get(konnect_key(konnect_id))
            except Exception:
                return None
            return json.loads(entry.value) if entry.value else None
        finally:
            await nc.close()

    return asyncio.run(run())


def _url(canvas_or_spec: dict[str, Any]) -> str:
    if "steps" in canvas_or_spec:
        return canvas_or_spec["steps"][0]["url"]
    return json.dumps(canvas_or_spec["apps"][1])


def test_each_publish_is_a_new_immutable_revision(client, api, nats_server) -> None:
    headers = api.new_user()
    first = _publish(client, api, headers, V1, message="First version")
    konnect_id = first["konnect_id"]
    assert first["revision"] == 1
    with get_sessionmaker()() as s:
        [row] = s.scalars(select(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id))
        frozen = (row.id, row.canvas_json, row.spec, row.created_at)
    second = _publish(client, api, headers, V2, konnect_id=konnect_id)
    assert second["revision"] == 2 and second["message"] == "Konnect published successfully"

    listed = client.get(f"{K}/{konnect_id}/revisions", headers=headers)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    assert body["total"] == 2 and body["live_revision"] == 2
    assert [(r["number"], r["live"], r["message"]) for r in body["revisions"]] == [
        (2, True, ""),
        (1, False, "First version"),
    ]
    assert body["revisions"][0]["published_by_email"].endswith("@example.com")
    assert body["revisions"][0]["restored_from"] is None

    # Revision 1 is as it was published: the same row, canvas and spec.
    with get_sessionmaker()() as s:
        row = s.scalar(
            select(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id, KonnectRevision.number == 1)
        )
        assert (row.id, row.canvas_json, row.spec, row.created_at) == frozen
        konnect = s.get(Konnect, konnect_id)
        assert konnect.live_revision == 2 and konnect.published_spec["revision"] == 2
    one = client.get(f"{K}/{konnect_id}/revisions/1", headers=headers).json()
    assert one["spec"]["steps"][0]["url"] == V1 and one["spec"]["revision"] == 1
    assert "token" not in one["spec"]["trigger"]  # the webhook's secret token is not shown
    assert one["canvas_json"]["apps"][1]["data"] == api.canvas(url=V1)["apps"][1]["data"]
    assert one["live"] is False
    # The runners got the spec naming its revision.
    assert _live_spec(nats_server.admin_url, konnect_id)["revision"] == 2

    # Paginated, newest first.
    page = client.get(f"{K}/{konnect_id}/revisions?page_size=1&page_index=2", headers=headers).json()
    assert [r["number"] for r in page["revisions"]] == [1] and page["total"] == 2


def test_restore_publishes_an_old_canvas_as_a_new_revision(client, api, nats_server) -> None:
    headers = api.new_user()
    konnect_id = _publish(client, api, headers, V1)["konnect_id"]
    _publish(client, api, headers, V2, konnect_id=konnect_id)
    # A pending draft is replaced by the restore.
    r = client.post(
        f"{K}/save_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": api.canvas(url=V3)},
        headers=headers,
    )
    assert r.json()["draft_pending"] is True

    r = client.post(f"{K}/{konnect_id}/revisions/1/restore", json={"message": "Back to v1"}, headers=headers)
    assert r.status_code == 200, r.text
    reply = r.json()
    assert reply["revision"] == 3 and reply["konnect_status"] == "Published" and reply["draft_pending"] is False
    assert "Revision 1 restored" in reply["message"]

    listed = client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()
    assert [(r["number"], r["restored_from"], r["live"]) for r in listed["revisions"]] == [
        (3, 1, True),
        (2, None, False),
        (1, None, False),
    ]
    assert listed["revisions"][0]["message"] == "Back to v1"
    edit = client.get(f"{K}/{konnect_id}/edit", headers=headers).json()
    assert edit["canvas_json"]["apps"][1]["data"] == api.canvas(url=V1)["apps"][1]["data"]
    assert edit["draft_pending"] is False
    live = _live_spec(nats_server.admin_url, konnect_id)
    assert live["revision"] == 3 and live["steps"][0]["url"] == V1
    with get_sessionmaker()() as s:
        rows = {r.number: r for r in s.scalars(select(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id))}
        assert rows[2].spec["steps"][0]["url"] == V2 and rows[2].spec["revision"] == 2  # untouched
        assert rows[3].canvas_json == rows[1].canvas_json

    # Without a message: says what it restored. The live one cannot be restored (nothing to do).
    r = client.post(f"{K}/{konnect_id}/revisions/2/restore", headers=headers)
    assert r.status_code == 200, r.text
    assert client.get(f"{K}/{konnect_id}/revisions/4", headers=headers).json()["message"] == "Restored revision 2"
    r = client.post(f"{K}/{konnect_id}/revisions/4/restore", json={}, headers=headers)
    assert r.status_code == 409 and "already live" in r.json()["message"]


def test_missing_and_hostile_requests_are_clear(client, api) -> None:
    headers = api.new_user()
    konnect_id = _publish(client, api, headers, V1)["konnect_id"]
    r = client.get(f"{K}/{konnect_id}/revisions/9", headers=headers)
    assert r.status_code == 404 and r.json()["message"] == f"Revision 9 of konnect {konnect_id} not found"
    r = client.post(f"{K}/{konnect_id}/revisions/9/restore", headers=headers)
    assert r.status_code == 404 and "Revision 9" in r.json()["message"]
    assert client.get(f"{K}/999999999/revisions", headers=headers).status_code == 404
    for bad in ("0", "-1", str(2**31), "x"):
        assert client.get(f"{K}/{konnect_id}/revisions/{bad}", headers=headers).status_code == 422, bad
    r = client.post(f"{K}/{konnect_id}/revisions/1/restore", json={"message": "x" * 501}, headers=headers)
    assert r.status_code == 422 and "500" in r.text
    r = client.post(f"{K}/{konnect_id}/revisions/1/restore", json={"message": "a\x00b"}, headers=headers)
    assert r.status_code == 422 and "control characters" in r.text
    r = client.post(
        f"{K}/publish_konnect",
        json={"konnect_id": konnect_id, "canvas_name": True, "canvas_json": api.canvas(url=V2), "message": "y" * 501},
        headers=headers,
    )
    assert r.status_code == 422
    assert client.get(f"{K}/{konnect_id}/revisions").status_code == 401
    # Another account sees none of it.
    stranger = api.new_user()
    assert client.get(f"{K}/{konnect_id}/revisions", headers=stranger).status_code == 404
    assert client.get(f"{K}/{konnect_id}/revisions/1", headers=stranger).status_code == 404
    assert client.post(f"{K}/{konnect_id}/revisions/1/restore", headers=stranger).status_code == 404
    # A revision whose canvas no longer compiles is refused and the draft kept.
    with get_sessionmaker()() as s:
        row = s.scalar(select(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id))
        broken = json.loads(json.dumps(row.canvas_json))
        broken["apps"][1]["data"]["selectedValue"]["apiDetails"]["endpointURL"] = ""
        _publish(client, api, headers, V2, konnect_id=konnect_id)
        row = s.scalar(
            select(KonnectRevision).where(KonnectRevision.konnect_id == konnect_id, KonnectRevision.number == 1)
        )
        row.canvas_json = broken
        s.commit()
    r = client.post(f"{K}/{konnect_id}/revisions/1/restore", headers=headers)
    assert r.status_code == 422, r.text
    edit = client.get(f"{K}/{konnect_id}/edit", headers=headers).json()
    assert edit["canvas_json"]["apps"][1]["data"] == api.canvas(url=V2)["apps"][1]["data"]
    assert client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()["total"] == 2


def test_retention_keeps_the_newest_and_never_the_live_one(client, api) -> None:
    headers = api.new_user()
    konnect_id = _publish(client, api, headers, V1)["konnect_id"]
    client.app.dependency_overrides[app_settings] = lambda: get_settings().model_copy(update={"revisions_keep": 2})
    try:
        for url in (V2, V3, V1):
            _publish(client, api, headers, url, konnect_id=konnect_id)
        listed = client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()
        assert [r["number"] for r in listed["revisions"]] == [4, 3] and listed["total"] == 2
        # Restoring the oldest kept one: the new one is live, the newest two are kept.
        r = client.post(f"{K}/{konnect_id}/revisions/3/restore", headers=headers)
        assert r.status_code == 200 and r.json()["revision"] == 5
        assert [
            r["number"] for r in client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()["revisions"]
        ] == [
            5,
            4,
        ]
    finally:
        client.app.dependency_overrides.clear()
    # The live revision survives retention even when it is not among the newest (restored from the crud).
    with get_sessionmaker()() as s:
        assert crud.apply_retention(s, konnect_id=konnect_id, keep=1, live=4) == 0
        s.commit()
        numbers = sorted(s.scalars(select(KonnectRevision.number).where(KonnectRevision.konnect_id == konnect_id)))
        assert numbers == [4, 5]
    # Withdrawn: no revision is live; the revisions stay.
    r = client.post(f"{K}/{konnect_id}/update_status", json={"status": "Draft"}, headers=headers)
    assert r.status_code == 200
    listed = client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()
    assert listed["live_revision"] is None and not any(r["live"] for r in listed["revisions"])
    # Publishing again by status change makes the next revision.
    r = client.post(f"{K}/{konnect_id}/update_status", json={"status": "Published"}, headers=headers)
    assert r.status_code == 200
    assert client.get(f"{K}/{konnect_id}/revisions", headers=headers).json()["live_revision"] == 6


def _member(client, api, owner: dict[str, str], email: str, access: str) -> dict[str, str]:
    r = client.post(
        "/api/v1/members/add_team_user", json={"email": email, "first_name": "M", "access": access}, headers=owner
    )
    assert r.status_code == 200, r.text
    token = re.search(r"/reset-password/(\S+)", api.mail_to(email)[-1]["text"]).group(1)
    body = {"reset_password_token": token, "password": "member-pass-1", "password_confirmation": "member-pass-1"}
    assert client.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return api.login(email, "member-pass-1")


def test_team_members_read_and_restore_in_the_account_and_are_named(client, api) -> None:
    owner_email = api.signup_and_verify()
    with get_sessionmaker()() as s:
        quota.set_plan(s, email=owner_email, plan="Team")
        owner_id = s.scalar(select(User.id).where(User.email == owner_email))
    owner = api.login(owner_email)
    konnect_id = _publish(client, api, owner, V1)["konnect_id"]
    _publish(client, api, owner, V2, konnect_id=konnect_id)
    member_email = f"rev-{uuid.uuid4().hex[:8]}-{owner_email}"
    member = _member(client, api, owner, member_email, "Create")

    listed = client.get(f"{K}/{konnect_id}/revisions", headers=member)
    assert listed.status_code == 200 and listed.json()["total"] == 2
    assert client.get(f"{K}/{konnect_id}/revisions/1", headers=member).status_code == 200
    r = client.post(f"{K}/{konnect_id}/revisions/1/restore", json={"message": "member restore"}, headers=member)
    assert r.status_code == 200, r.text
    newest = client.get(f"{K}/{konnect_id}/revisions", headers=owner).json()["revisions"][0]
    assert newest["number"] == 3 and newest["published_by_email"] == member_email
    assert newest["published_by"] != owner_id
    with get_sessionmaker()() as s:
        assert s.get(KonnectRevision, s.scalar(select(KonnectRevision.id).where(
            KonnectRevision.konnect_id == konnect_id, KonnectRevision.number == 3))).owner_id == owner_id  # fmt: skip
    # The member's restore is in the owner's audit log.
    audit = client.get("/api/v1/members/audit_log", headers=owner).json()
    assert any("/revisions/1/restore" in e["action"] for e in audit["entries"]), audit


def test_the_task_log_names_the_revision_that_ran(client, api) -> None:
    headers = api.new_user()
    published = _publish(client, api, headers, V1)
    konnect_id = published["konnect_id"]
    with get_sessionmaker()() as s:
        owner_id = s.get(Konnect, konnect_id).owner_id
        now = datetime.now(UTC).isoformat()
        base = {
            "konnect_id": konnect_id, "owner_id": owner_id, "konnect_name": "f", "status": "SUCCESS",
            "started_at": now, "finished_at": now, "trigger_id": "node-1", "trigger_output": {}, "steps": [],
        }  # fmt: skip
        assert store_event(s, TaskEvent.model_validate({**base, "run_id": uuid.uuid4().hex, "revision": 1}))
        assert store_event(s, TaskEvent.model_validate({**base, "run_id": uuid.uuid4().hex}))
        # A number the column cannot hold is stored as unknown, not refused.
        assert store_event(s, TaskEvent.model_validate({**base, "run_id": uuid.uuid4().hex, "revision": 2**40}))
    logs = client.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
    assert sorted((log["revision"] is None, log["revision"]) for log in logs) == [
        (False, 1),
        (True, None),
        (True, None),
    ]
