"""The task-event consumer's batches, large payloads kept apart (with retention), and /metrics.

Real PostgreSQL: many events stored in one transaction (a redelivery and an unknown konnect in the
same batch), task quotas settled once per run; a payload over the inline limit goes to task_payloads,
reads back whole through the api, and after its retention period reads back as purged.
"""

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update

from konnectz_api.crud import task_payloads
from konnectz_api.db import get_sessionmaker
from konnectz_api.models import Task, TaskLog, TaskPayload, User
from konnectz_api.services.task_events import store_events
from konnectz_devstack.testing import task_event


def _event(konnect_id, owner_id, *, steps=2, **more):
    """A run of two steps by default, each SUCCESS, with a trace."""
    trace = {"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331"}
    return task_event(konnect_id, owner_id, name="Batch flow", steps=steps, step_status="SUCCESS", **trace, **more)


def test_a_batch_is_stored_once_and_settles_each_run_once(client, api):
    _, owner_id, konnect_id = api.owner_and_konnect()
    with get_sessionmaker()() as s:
        consumed_before = s.scalar(select(User.task_consumed).where(User.id == owner_id))
    events = [_event(konnect_id, owner_id) for _ in range(40)]
    stranger = _event(konnect_id, owner_id + 1000)  # not the konnect's owner: dropped
    with get_sessionmaker()() as s:
        assert store_events(s, [*events, stranger, events[0]]) == [True] * 40 + [False, False]
    with get_sessionmaker()() as s:  # a redelivered batch stores nothing and counts nothing
        assert store_events(s, events[:5]) == [False] * 5
    with get_sessionmaker()() as s:
        logs = s.scalar(select(func.count()).select_from(TaskLog).where(TaskLog.konnect_id == konnect_id))
        tasks = s.scalar(select(func.count()).select_from(Task).join(TaskLog).where(TaskLog.konnect_id == konnect_id))
        consumed = s.scalar(select(User.task_consumed).where(User.id == owner_id))
        trace = s.scalar(select(TaskLog.trace_id).where(TaskLog.run_id == events[3].run_id))
    assert (logs, tasks) == (40, 80)
    assert consumed - consumed_before == 80  # no reservation: each executed action debited once
    assert trace == "0af7651916cd43dd8448eb211c80319c"


def test_large_payloads_are_kept_apart_and_purged_after_retention(client, api):
    headers, owner_id, konnect_id = api.owner_and_konnect()
    big = {"blob": "x" * 200_000}
    small, large = _event(konnect_id, owner_id), _event(konnect_id, owner_id, output=big, steps=1)
    with get_sessionmaker()() as s:
        assert store_events(s, [small, large], inline_limit=64 * 1024) == [True, True]
    with get_sessionmaker()() as s:
        log = s.scalar(select(TaskLog).where(TaskLog.run_id == large.run_id))
        assert log is not None and task_payloads.is_stub(log.data) and log.data["size"] > 200_000
        task = s.scalar(select(Task).where(Task.task_log_id == log.id))
        assert task is not None and task_payloads.is_stub(task.data)
        assert s.scalar(select(func.count()).select_from(TaskPayload).where(TaskPayload.task_log_id == log.id)) == 2
        small_log = s.scalar(select(TaskLog).where(TaskLog.run_id == small.run_id))
        assert small_log is not None and not task_payloads.is_stub(small_log.data)
        log_id = log.id
    # Read back whole through the api.
    listed = client.get(f"/api/v1/task_logs/logs?konnect_id={konnect_id}", headers=headers).json()["task_logs"]
    by_id = {row["id"]: row for row in listed}
    assert by_id[log_id]["data"]["node-2"] == big
    steps = client.get(f"/api/v1/task_logs/{log_id}/tasks", headers=headers).json()["tasks"]
    assert steps[0]["data"]["output"] == big
    # Past the retention period the purge job deletes them; the api says so instead of failing.
    with get_sessionmaker()() as s:
        s.execute(
            update(TaskPayload)
            .where(TaskPayload.task_log_id == log_id)
            .values(created_at=datetime.now(UTC) - timedelta(days=40))
        )
        s.commit()
        assert task_payloads.purge(s, older_than_days=30) == 2
        assert task_payloads.purge(s, older_than_days=0) == 0
    steps = client.get(f"/api/v1/task_logs/{log_id}/tasks", headers=headers).json()["tasks"]
    assert steps[0]["data"]["payload"] == "purged" and steps[0]["data"]["size"] > 200_000


def _sample(text, name, labels=""):
    for line in text.splitlines():
        if line.startswith(name + (labels and "{")) and (not labels or labels in line):
            return float(line.rsplit(" ", 1)[1])
        if not labels and line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_move_when_events_are_stored(client, api):
    from konnectz_api import observability

    _, owner_id, konnect_id = api.owner_and_konnect()
    before = client.get("/metrics").text
    events = [_event(konnect_id, owner_id) for _ in range(3)] + [_event(konnect_id, owner_id, status="ERROR")]
    with get_sessionmaker()() as s:
        outcomes = store_events(s, events)
    observability.record_stored(events, outcomes, 0.01)
    after = client.get("/metrics")
    assert after.status_code == 200 and after.headers["content-type"].startswith("text/plain")
    ok = 'status="SUCCESS"'
    assert (
        _sample(after.text, "konnectz_task_events_stored_total", ok)
        - _sample(before, "konnectz_task_events_stored_total", ok)
        == 3
    )
    assert _sample(after.text, "konnectz_runs_failed_total") - _sample(before, "konnectz_runs_failed_total") == 1
    steps = 'kind="api_call"'
    assert (
        _sample(after.text, "konnectz_step_seconds_count", steps)
        - _sample(before, "konnectz_step_seconds_count", steps)
        == 8
    )


def test_runs_and_failures_today_are_counted_per_konnect_for_the_resource_status(client, api):
    """What `kubectl get konnects` shows in RUNS-TODAY and FAILURES-TODAY (the consumer's count)."""
    from konnectz_api.services.task_events import _counts_today

    _, owner_id, konnect_id = api.owner_and_konnect()
    _, other_owner, other_konnect = api.owner_and_konnect()
    events = [_event(konnect_id, owner_id) for _ in range(3)] + [_event(konnect_id, owner_id, status="ERROR")]
    events.append(_event(other_konnect, other_owner, status="ERROR"))
    yesterday = _event(konnect_id, owner_id, status="ERROR")
    yesterday = yesterday.model_copy(update={"finished_at": yesterday.finished_at - timedelta(days=1)})
    with get_sessionmaker()() as s:
        assert all(store_events(s, [*events, yesterday]))
    counts = _counts_today(get_sessionmaker(), events)
    assert counts == {konnect_id: (4, 1), other_konnect: (1, 1)}


def test_json_columns_go_in_binary_and_read_back_exactly(client, api):
    """The batch's JSONB columns are sent in binary (issue 34: the text format's escaping of every quote
    was a third of the api's CPU storing events); what is read back is what was sent."""
    from psycopg.adapt import PyFormat, Transformer
    from psycopg.pq import Format

    from konnectz_api.services.task_events import TASK_COLUMNS, _columns

    tricky = {"q": 'say "hi"\\n', "uni": "é€😀", "nested": [{"a": None, "b": 1.5, "c": True}], "empty": ""}
    columns = _columns([{c: tricky if t == "jsonb" else None for c, t in TASK_COLUMNS.items()}], TASK_COLUMNS)
    assert Transformer().get_dumper(columns["data"], PyFormat.AUTO).format == Format.BINARY
    _, owner_id, konnect_id = api.owner_and_konnect()
    event = _event(konnect_id, owner_id, output=tricky, steps=1)
    with get_sessionmaker()() as s:
        assert store_events(s, [event]) == [True]
    with get_sessionmaker()() as s:
        log = s.scalar(select(TaskLog).where(TaskLog.run_id == event.run_id))
        assert log is not None
        task = s.scalar(select(Task).where(Task.task_log_id == log.id))
    assert task is not None and task.data["output"] == tricky
    assert log.data[event.steps[0].step_id] == tricky
