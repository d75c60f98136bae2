"""Run-control routes against the api's real NATS and PostgreSQL (no runner: the active entry is
written as the runner writes it): a team member lists the owner's active runs and cancels one, the
cancel names the member; another account sees nothing; a finished run answers 409; a CANCELLED
task event is stored with its status and who cancelled it."""

from __future__ import annotations

import asyncio
import re
import secrets
from datetime import UTC, datetime

import nats
import pytest

from konnectz_api.crud import quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.services.task_events import store_event
from konnectz_contracts.run_control import ActiveRun, CancelRequest
from konnectz_devstack.testing import task_event
from konnectz_runner.bus import cancel_requested, mark_active, run_state_buckets

pytestmark = pytest.mark.integration


def _nats(url: str, work) -> object:
    async def main() -> object:
        nc = await nats.connect(url)
        try:
            active, cancels = await run_state_buckets(nc.jetstream())
            return await work(active, cancels)
        finally:
            await nc.close()

    return asyncio.run(main())


def _member(client, api, owner: dict[str, str], email: str) -> dict[str, str]:
    r = client.post(
        "/api/v1/members/add_team_user", json={"email": email, "first_name": "M", "access": "Create"}, headers=owner
    )
    assert r.status_code == 200, r.text
    token = re.search(r"/reset-password/(\S+)", api.mail_to(email)[-1]["text"]).group(1)
    body = {"reset_password_token": token, "password": "member-pass-1", "password_confirmation": "member-pass-1"}
    assert client.post("/api/v1/users/update_user_password", json=body).json()["key"] == "PASSWORD_UPDATED"
    return api.login(email, "member-pass-1")


def test_a_member_lists_and_cancels_the_owners_run(client, api, nats_server) -> None:
    owner = api.owner_and_konnect()
    with get_sessionmaker()() as s:
        quota.set_plan(s, email=owner.email, plan="Team")
    member_email = f"member-{secrets.token_hex(4)}@example.com"
    member = _member(client, api, owner.headers, member_email)
    run_id = secrets.token_hex(16)
    entry = ActiveRun(
        run_id=run_id, konnect_id=owner.konnect_id, owner_id=owner.owner_id, status="RUNNING",
        since=datetime.now(UTC), step_id="node-2",
    )  # fmt: skip

    async def put(active, _cancels) -> None:
        await mark_active(active, entry)

    _nats(nats_server.admin_url, put)
    active_path = f"/api/v1/konnects/{owner.konnect_id}/runs/active"
    listed = client.get(active_path, headers=member)
    assert listed.status_code == 200, listed.text
    assert [(r["run_id"], r["status"], r["step_id"]) for r in listed.json()["runs"]] == [(run_id, "RUNNING", "node-2")]
    stranger = api.new_user()
    assert client.get(active_path, headers=stranger).status_code == 404
    cancel = f"/api/v1/konnects/{owner.konnect_id}/runs/{run_id}/cancel"
    assert client.post(cancel, headers=stranger).status_code == 404

    reply = client.post(cancel, headers=member)
    assert reply.status_code == 202, reply.text
    assert reply.json()["status"] == "RUNNING"

    async def read(_active, cancels) -> CancelRequest | None:
        return await cancel_requested(cancels, run_id)

    stored = _nats(nats_server.admin_url, read)
    assert isinstance(stored, CancelRequest) and stored.by == member_email

    # The runner's CANCELLED event is stored as such; the run is then finished: 409.
    event = task_event(
        owner.konnect_id, owner.owner_id, status="CANCELLED", step_status="SUCCESS",
        run_id=run_id, cancelled_by=member_email,
    )  # fmt: skip
    with get_sessionmaker()() as s:
        assert store_event(s, event)
    logs = client.get(f"/api/v1/task_logs/logs?konnect_id={owner.konnect_id}", headers=owner.headers).json()
    assert [(r["status"], r["cancelled_by"]) for r in logs["task_logs"]] == [("CANCELLED", member_email)]
    again = client.post(cancel, headers=owner.headers)
    assert again.status_code == 409 and "finished already (CANCELLED)" in again.json()["message"]
    # Not a failed run: not replayable.
    log_id = logs["task_logs"][0]["id"]
    assert client.post(f"/api/v1/task_logs/{log_id}/replay", headers=owner.headers).status_code == 409


def test_hostile_run_ids_are_refused_clearly(client, api) -> None:
    owner = api.owner_and_konnect()
    base = f"/api/v1/konnects/{owner.konnect_id}/runs"
    assert client.post(f"{base}/{'a' * 65}/cancel", headers=owner.headers).status_code == 422
    assert client.post(f"{base}/a.b/cancel", headers=owner.headers).status_code == 422
    missing = client.post(f"{base}/{'f' * 32}/cancel", headers=owner.headers)
    assert missing.status_code == 404 and "is not running, waiting or queued" in missing.json()["message"]
    assert client.get("/api/v1/konnects/999999999/runs/active", headers=owner.headers).status_code == 404
