"""Bounded storage and no poison message, on the api's side (real PostgreSQL and NATS).

- A task event the database refuses for its content (here an ``attempts`` beyond PostgreSQL's
  integer) is not handed back for ever: after a few deliveries it is stored without its data, as an
  ERROR task log that says why; the events beside it are stored as sent.
- KZ_EVENTS keeps an event only until the api stored it (interest retention): once stored, the
  event is gone from NATS.
"""

import asyncio
import time

import nats
from sqlalchemy import select

from konnectz_api.db import get_sessionmaker
from konnectz_api.services.task_events import POISON_ATTEMPTS, retry_delay
from konnectz_contracts.events import EVENTS_CONSUMER, STREAM_EVENTS, event_subject
from konnectz_devstack.testing import task_event
from konnectz_runner.bus import publish_event


def _event(konnect_id, owner_id, **update):
    return task_event(konnect_id, owner_id, output={"ok": True}, **{"trigger_output": {"secret": "body"}, **update})


def _logs(client, headers, konnect_id):
    return client.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]


def test_a_poison_task_event_ends_as_an_error_task_log_without_its_data(client, api, nats_server):
    headers, owner_id, konnect_id = api.owner_and_konnect()
    poison = _event(konnect_id, owner_id, attempts=2**40)  # PostgreSQL's integer column refuses it
    good = _event(konnect_id, owner_id)

    async def publish():
        nc = await nats.connect(nats_server.admin_url)
        try:
            for event in (poison, good):
                await publish_event(nc.jetstream(), event)
        finally:
            await nc.drain()

    asyncio.run(publish())
    # Deliveries 1..POISON_ATTEMPTS, handed back after 2, 4, ... seconds, then stored without data.
    within = sum(retry_delay(n) for n in range(1, POISON_ATTEMPTS)) + 15
    deadline = time.monotonic() + within
    logs = []
    while time.monotonic() < deadline:
        logs = _logs(client, headers, konnect_id)
        if len(logs) == 2:
            break
        time.sleep(0.3)
    by_run = {log["run_id"]: log for log in logs}
    assert set(by_run) == {poison.run_id, good.run_id}, logs
    assert by_run[good.run_id]["status"] == "SUCCESS"
    assert by_run[good.run_id]["data"]["node-1"] == {"secret": "body"}
    stub = by_run[poison.run_id]
    assert stub["status"] == "ERROR"
    assert stub["data"]["node-1"]["dropped"] is True
    assert "could not be stored as the runner sent it" in stub["data"]["node-1"]["message"]
    assert "secret" not in str(stub["data"])

    async def remaining():
        nc = await nats.connect(nats_server.admin_url)
        try:
            js = nc.jetstream()
            info = await js.stream_info(STREAM_EVENTS, subjects_filter=event_subject(konnect_id))
            consumer = await js.consumer_info(STREAM_EVENTS, EVENTS_CONSUMER)
            return sum((info.state.subjects or {}).values()), consumer.num_ack_pending
        finally:
            await nc.drain()

    # Interest retention: both events were acknowledged once stored, so NATS no longer holds them.
    deadline = time.monotonic() + 10
    while asyncio.run(remaining())[0] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert asyncio.run(remaining())[0] == 0


def test_a_run_whose_request_was_not_kept_is_not_replayed_with_the_note(client, api):
    """A refused run (over quota) or one whose request was too large for its task event keeps only a
    note: replaying it would run the flow on that note, so it is a 409 that says why."""
    from konnectz_api.services.task_events import store_event
    from konnectz_contracts.events import fit_event

    headers = api.new_user()
    reply = api.save_konnect(headers, api.canvas(), publish=True)
    konnect_id = int(reply.json()["konnect_id"])
    r = client.post(f"/api/v1/konnects/{konnect_id}/update_status", json={"status": "Published"}, headers=headers)
    assert r.status_code == 200, r.text
    with get_sessionmaker()() as s:
        from konnectz_api.models import Konnect

        owner_id = s.scalar(select(Konnect.owner_id).where(Konnect.id == konnect_id))
    note = {"refused": True, "message": "The run was refused, so its request was not kept."}
    refused = _event(konnect_id, owner_id, status="ERROR", refused="Task quota exceeded.", trigger_output=note)
    large, _ = fit_event(_event(konnect_id, owner_id, status="ERROR", trigger_output={"big": "x" * 5_000_000}))
    assert large.trigger_output["truncated"] is True
    with get_sessionmaker()() as s:
        assert store_event(s, refused) and store_event(s, large)
    logs = {log["run_id"]: log for log in _logs(client, headers, konnect_id)}
    for event, words in ((refused, "The run was refused"), (large, "too large to keep")):
        answer = client.post(f"/api/v1/task_logs/{logs[event.run_id]['id']}/replay", headers=headers)
        assert answer.status_code == 409, answer.text
        assert words in answer.json()["message"] and answer.json()["message"].endswith("It cannot be replayed.")
