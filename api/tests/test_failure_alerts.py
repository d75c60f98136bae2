"""Failure alerts (run control): the digest state in PostgreSQL, the owner's e-mail, and publishing
checks of the alert's flow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from konnectz_api.core.config import get_settings
from konnectz_api.crud import failure_alerts
from konnectz_api.crud.failure_alerts import Due
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import FailureAlertState, Konnect
from konnectz_api.services.failure_alerts import alert_failures, send_due_digests
from konnectz_devstack.testing import task_event


def test_one_alert_per_digest_interval_and_the_failures_counted_between(client, api) -> None:
    _headers, owner_id, konnect_id = api.owner_and_konnect()
    t0 = datetime(2026, 11, 27, 1, 0, tzinfo=UTC)

    def claim(minutes: float) -> Due | None:
        with get_sessionmaker()() as s:
            at = t0 + timedelta(minutes=minutes)
            return failure_alerts.claim(
                s, konnect_id=konnect_id, owner_id=owner_id, digest_minutes=60, failed_at=at, now=at
            )

    def flush(minutes: float) -> Due | None:
        with get_sessionmaker()() as s:
            return failure_alerts.flush(
                s, konnect_id=konnect_id, digest_minutes=60, now=t0 + timedelta(minutes=minutes)
            )

    assert claim(0) == Due(more=0, since=None)  # the first failure alerts at once
    assert claim(1) is None and claim(2) is None  # counted
    assert flush(30) is None  # the interval has not passed
    assert flush(61) == Due(more=2, since=t0 + timedelta(minutes=1))
    assert flush(62) is None  # nothing left to send
    assert claim(63) is None  # within the interval of the digest that went out at 61
    assert claim(122) == Due(more=1, since=t0 + timedelta(minutes=63))


async def test_failures_mail_the_owner_once_then_a_digest_of_the_rest(client, api) -> None:
    _headers, owner_id, konnect_id, email = api.owner_and_konnect().__dict__.values()
    sessions = get_sessionmaker()
    alert = {"email": True, "run_konnect_id": None, "digest_minutes": 60}
    with sessions() as s:
        konnect = s.get(Konnect, konnect_id)
        assert konnect is not None
        konnect.published_spec = {"name": "Orders", "run_control": {"alert": alert}}
        konnect.konnect_name = "Orders"
        s.commit()

    def alert_mails() -> list[dict[str, Any]]:
        return [m for m in api.mail_to(email) if "failed" in m["subject"]]

    failed = [task_event(konnect_id, owner_id, status="ERROR") for _ in range(4)]
    failed = [e.model_copy(update={"steps": [e.steps[0].model_copy(update={"error": "HTTP 500"})]}) for e in failed]
    ok = task_event(konnect_id, owner_id)
    await alert_failures(None, sessions, get_settings(), [failed[0], ok])
    (mail,) = alert_mails()
    assert mail["subject"] == "Konnectz: Orders failed"
    assert (
        failed[0].run_id in mail["text"]
        and "Error: HTTP 500" in mail["text"]
        and "Step: Step 0 (node-2)" in mail["text"]
    )
    await alert_failures(None, sessions, get_settings(), failed[1:])
    assert len(alert_mails()) == 1
    assert await send_due_digests(None, sessions, get_settings()) == 0
    with sessions() as s:  # the interval passes
        s.execute(
            update(FailureAlertState)
            .where(FailureAlertState.konnect_id == konnect_id)
            .values(last_alert_at=datetime.now(UTC) - timedelta(minutes=61))
        )
        s.commit()
    assert await send_due_digests(None, sessions, get_settings()) >= 1
    digests = [m for m in alert_mails() if m["subject"] == "Konnectz: Orders failed 3 times"]
    assert len(digests) == 1 and "failed 3 times since" in digests[0]["text"]


def test_publishing_refuses_an_alert_flow_that_is_not_the_owners(client, api) -> None:
    _other_headers, _other_owner, others = api.owner_and_konnect()
    headers = api.new_user()
    canvas = api.canvas()
    canvas["runControl"] = {"alert": {"email": False, "runKonnectId": others}}
    saved = api.save_konnect(headers, canvas)
    assert saved.status_code == 200, saved.text
    konnect_id = saved.json()["konnect_id"]
    body = {"konnect_id": konnect_id, "canvas_name": True, "canvas_json": canvas}
    r = client.post("/api/v1/konnects/publish_konnect", json=body, headers=headers)
    assert r.status_code == 422
    assert (
        r.json()["message"]
        == f"Run settings: the failure alert's flow {others} does not exist or is not yours; pick another"
    )
    canvas["runControl"] = {"maxConcurrency": 500}
    r = client.post("/api/v1/konnects/publish_konnect", json=body | {"canvas_json": canvas}, headers=headers)
    assert r.status_code == 422 and "between 1 and 100" in r.json()["message"]
    assert client.get(f"/api/v1/konnects/{konnect_id}/edit", headers=headers).json()["canvas_json"]["runControl"] == {
        "maxConcurrency": 500
    }
