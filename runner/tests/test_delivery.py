"""Delivery guarantees against a real nats-server: the step journal, Idempotency-Key, leases."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from nats.aio.client import Client as NATS

from konnectz_contracts.events import (
    KV_KONNECTS,
    KV_STEPS,
    STREAM_RUNS,
    RunRequest,
    StepResult,
    TaskEvent,
    konnect_key,
    run_subject,
)
from konnectz_runner.apps import NetGuard, parse_networks
from konnectz_runner.bus import publish_run
from konnectz_runner.bus.timers import schedule_run, timer_subject
from konnectz_runner.engine import IN_DOUBT_ERROR, StepBusy, StepJournal, execute, step_key
from konnectz_runner.engine import journal as journal_module
from konnectz_runner.engine.journal import BUSY_SECONDS
from konnectz_runner.work import worker as worker_module
from konnectz_runner.work.worker import (
    ACK_WAIT_SECONDS,
    CONSUMER_MAX_DELIVER,
    MAX_ATTEMPTS,
    SWEEP_SECONDS,
)

from .test_server import RunningRunner, new_spec, next_event, wait_until

pytestmark = pytest.mark.integration


async def test_a_redelivered_run_does_not_repeat_finished_steps(nc: NATS, echo: Any) -> None:
    kv = await nc.jetstream().key_value(KV_STEPS)
    spec = new_spec(echo.base + "/echo")
    run = RunRequest(run_id=secrets.token_hex(16), konnect_id=spec.konnect_id,
                     trigger_output={"order": {"id": 5}}, received_at=datetime.now(UTC))  # fmt: skip
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    async with httpx.AsyncClient(timeout=5) as http:
        first = await execute(spec, run, http=http, guard=guard, journal=StepJournal(kv, run.run_id, replay=False))
        assert len(echo.requests_to("/echo")) == 1
        # The key is derived from the run and the step, and holds the step's result.
        entry = await kv.get(step_key(run.run_id, "node-2"))
        assert entry.value is not None and b'"status":"SUCCESS"' in entry.value
        # The redelivery (the runner died before the run's event was stored) replays the record.
        journal = StepJournal(kv, run.run_id, replay=True)
        again = await execute(spec, run, http=http, guard=guard, journal=journal)
        assert len(echo.requests_to("/echo")) == 1 and journal.recalled == 1
        assert isinstance(first, TaskEvent) and isinstance(again, TaskEvent)
        assert again.steps == first.steps
        # Another run of the same konnect is not confused with it.
        other = run.model_copy(update={"run_id": secrets.token_hex(16)})
        await execute(spec, other, http=http, guard=guard, journal=StepJournal(kv, other.run_id, replay=True))
        assert len(echo.requests_to("/echo")) == 2


async def test_pure_steps_are_not_journaled(nc: NATS, echo: Any) -> None:
    kv = await nc.jetstream().key_value(KV_STEPS)
    journal = StepJournal(kv, "r", replay=False)
    assert journal.journaled("api_call") and journal.journaled("app_event") and journal.journaled("data_forwarder")
    assert not journal.journaled("filter") and not journal.journaled("formatter") and journal.journaled("delay")
    assert journal.marked("api_call") and not journal.marked("delay")


async def test_runs_consumer_has_short_leases(shared_runner: RunningRunner, nc: NATS) -> None:
    info = await nc.jetstream().consumer_info(STREAM_RUNS, "runner")
    assert info.config.ack_wait == ACK_WAIT_SECONDS <= 10
    # Bounded: the worker ends a run as an ERROR task log on delivery MAX_ATTEMPTS; the deliveries after
    # that only store that event, and the server stops offering the run after CONSUMER_MAX_DELIVER.
    assert info.config.max_deliver == CONSUMER_MAX_DELIVER == 2 * MAX_ATTEMPTS


async def test_idempotency_key_starts_one_run(shared_runner: RunningRunner, nc: NATS, echo: Any) -> None:
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    hook = f"{shared_runner.base}/hooks/{spec.trigger.token}"
    async with httpx.AsyncClient(timeout=10) as http:
        key = {"Idempotency-Key": "order-5-" + secrets.token_hex(4)}
        first = await http.post(hook, json={"order": {"id": 5}}, headers=key)
        assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
        run_id = first.json()["run_id"]
        # Retries, sequential and concurrent, answer the first run's id and start nothing.
        retries = await asyncio.gather(*(http.post(hook, json={"order": {"id": 5}}, headers=key) for _ in range(5)))
        assert {r.status_code for r in retries} == {200}
        assert {r.json()["run_id"] for r in retries} == {run_id}
        assert {r.headers["Idempotent-Replayed"] for r in retries} == {"true"}
        # Another key, or the same key on another konnect, is another run.
        other = await http.post(hook, json={"order": {"id": 6}}, headers={"Idempotency-Key": "order-6"})
        assert other.status_code == 200 and other.json()["run_id"] != run_id
        # Bad keys are refused, not stored.
        long_key = await http.post(hook, json={}, headers={"Idempotency-Key": "k" * 256})
        assert long_key.status_code == 400 and "at most 255" in long_key.json()["message"]
        blank = await http.post(hook, json={}, headers={"Idempotency-Key": "café".encode()})
        assert blank.status_code == 400 and blank.json()["message"] == "Idempotency-Key must be printable ASCII"
        await wait_until(lambda: len(echo.requests_to("/echo")) >= 2, within=15)
        await asyncio.sleep(0.5)
        assert sorted(r.json()["order"]["id"] for r in echo.requests_to("/echo")) == [5, 6]
    event, _ = await next_event(js, spec.konnect_id)
    assert event.run_id in (run_id, other.json()["run_id"])
    await kv.delete(konnect_key(spec.konnect_id))


@pytest.mark.parametrize("policy", ["fail", "retry"])
async def test_a_step_in_doubt_is_not_repeated_unless_asked(nc: NATS, echo: Any, policy: str) -> None:
    """The runner died while the step ran (its start mark has no result): fail it, or run it again."""
    kv = await nc.jetstream().key_value(KV_STEPS)
    spec = new_spec(echo.base + "/echo")
    run = RunRequest(run_id=secrets.token_hex(16), konnect_id=spec.konnect_id,
                     trigger_output={"order": {"id": 5}}, received_at=datetime.now(UTC))  # fmt: skip
    guard = NetGuard(parse_networks("127.0.0.0/8"))
    first = StepJournal(kv, run.run_id, replay=False, in_doubt="fail")
    await first.begin("node-2", None)  # ... and the runner was SIGKILLed here
    journal = StepJournal(kv, run.run_id, replay=True, in_doubt=policy)  # type: ignore[arg-type]
    async with httpx.AsyncClient(timeout=5) as http:
        # Just started: it may still be running in another delivery of the run. Try later.
        with pytest.raises(StepBusy):
            await execute(spec, run, http=http, guard=guard, journal=journal)
        assert echo.requests_to("/echo") == []
        # Started long ago and never finished: its runner died while it ran.
        old = json.dumps({"started": time.time() - BUSY_SECONDS - 1}).encode()
        await kv.put(step_key(run.run_id, "node-2"), old)
        event = await execute(spec, run, http=http, guard=guard, journal=journal)
    assert isinstance(event, TaskEvent)
    if policy == "fail":
        assert echo.requests_to("/echo") == [] and journal.doubtful == 1
        assert event.status == "ERROR" and event.steps[0].error == IN_DOUBT_ERROR
    else:
        assert len(echo.requests_to("/echo")) == 1 and event.status == "SUCCESS"


async def test_a_mark_whose_store_was_not_confirmed_is_taken_back(nc: NATS) -> None:
    """NATS stored the started mark but the reply was lost: the step did not run, so no doubt."""
    kv = await nc.jetstream().key_value(KV_STEPS)

    class LostReply:
        async def create(self, key: str, value: bytes) -> int:
            await kv.create(key, value)
            raise TimeoutError("nats: timeout")

        def __getattr__(self, name: str) -> Any:
            return getattr(kv, name)

    run_id = secrets.token_hex(16)
    with pytest.raises(TimeoutError):
        await StepJournal(LostReply(), run_id, replay=False).begin("node-2", None)  # type: ignore[arg-type]
    again = StepJournal(kv, run_id, replay=True)
    assert await again.recall("node-2", None) is None  # not in doubt: it runs
    await again.begin("node-2", None)  # and can be marked again


async def test_a_result_whose_store_failed_is_stored_again(nc: NATS) -> None:
    """The bucket's leader was lost right after the step ran (two puts fail): the result is put again
    until acknowledged, so a redelivery recalls it instead of judging the step in doubt."""
    kv = await nc.jetstream().key_value(KV_STEPS)
    failures = [TimeoutError("nats: timeout"), ConnectionError("nats: no responders")]

    class LeaderLost:
        async def put(self, key: str, value: bytes) -> int:
            if failures:
                raise failures.pop(0)
            return int(await kv.put(key, value))

        def __getattr__(self, name: str) -> Any:
            return getattr(kv, name)

    run_id = secrets.token_hex(16)
    first = StepJournal(LeaderLost(), run_id, replay=False)  # type: ignore[arg-type]
    await first.begin("node-2", None)
    now = datetime.now(UTC)
    result = StepResult(
        step_id="node-2", name="API Call", status="SUCCESS", started_at=now, finished_at=now, input={}, output=None
    )
    await first.record(result, {"ok": True})
    assert failures == []
    again = StepJournal(kv, run_id, replay=True)
    recalled = await again.recall("node-2", None)
    assert recalled is not None and recalled[1].status == "SUCCESS" and recalled[1].output == {"ok": True}
    assert again.doubtful == 0 and again.recalled == 1


async def test_a_result_never_acknowledged_raises_after_a_bound(nc: NATS, monkeypatch: pytest.MonkeyPatch) -> None:
    """NATS stays away: record gives up after RECORD_SECONDS and raises (the run is retried)."""
    monkeypatch.setattr(journal_module, "RECORD_SECONDS", 0.3)
    monkeypatch.setattr(journal_module, "RECORD_RETRY_SECONDS", 0.05)
    kv = await nc.jetstream().key_value(KV_STEPS)
    puts = 0

    class Away:
        async def put(self, key: str, value: bytes) -> int:
            nonlocal puts
            puts += 1
            raise TimeoutError("nats: timeout")

        def __getattr__(self, name: str) -> Any:
            return getattr(kv, name)

    journal = StepJournal(Away(), secrets.token_hex(16), replay=False)  # type: ignore[arg-type]
    now = datetime.now(UTC)
    result = StepResult(
        step_id="node-2", name="API Call", status="SUCCESS", started_at=now, finished_at=now, input={}, output=None
    )
    with pytest.raises(TimeoutError):
        await journal.record(result, None)
    assert puts >= 2


async def test_finished_runs_leave_kz_runs_without_a_delete_each(
    shared_runner: RunningRunner, nc: NATS, echo: Any
) -> None:
    """Finished runs are swept from KZ_RUNS (one purge below the consumer's ack floor, issue 34), while a
    timer of the same konnect, another subject of the stream, stays."""
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    waiting = RunRequest(run_id=secrets.token_hex(16), konnect_id=spec.konnect_id, trigger_output={},
                         received_at=datetime.now(UTC))  # fmt: skip
    timer = await schedule_run(js, waiting, datetime.now(UTC) + timedelta(hours=1), key="sweep-" + secrets.token_hex(4))

    async def stored(subject: str) -> int:
        info = await js.stream_info(STREAM_RUNS, subjects_filter=subject)
        return sum((info.state.subjects or {}).values())

    requests: list[str] = []

    async def spy(msg: Any) -> None:
        requests.append(msg.subject)

    # The consumer is shared with this NATS's other tests: a run of theirs still handed back (a konnect no
    # longer loaded: about a minute) holds the ack floor, and the runs behind it are stragglers.
    async def settled() -> bool:
        info = await js.consumer_info(STREAM_RUNS, "runner")
        return info.num_pending == 0 and info.num_ack_pending == 0

    await wait_until(settled, within=120)
    watching = [await nc.subscribe(f"$JS.API.STREAM.{kind}.{STREAM_RUNS}", cb=spy) for kind in ("MSG.DELETE", "PURGE")]
    hook = f"{shared_runner.base}/hooks/{spec.trigger.token}"
    async with httpx.AsyncClient(timeout=10) as http:
        for n in range(5):
            assert (await http.post(hook, json={"order": {"id": n}})).status_code == 200
    await wait_until(lambda: len(echo.requests_to("/echo")) >= 5, within=20)
    # Gone within two sweeps of the last run's ack (SWEEP_SECONDS each), none of them deleted one by one.
    await wait_until(lambda: _zero(stored(run_subject(spec.konnect_id))), within=4 * SWEEP_SECONDS + 5)
    for sub in watching:
        await sub.unsubscribe()
    assert f"$JS.API.STREAM.PURGE.{STREAM_RUNS}" in requests
    assert f"$JS.API.STREAM.MSG.DELETE.{STREAM_RUNS}" not in requests
    assert await stored(timer_subject(spec.konnect_id, "*")) == 1
    assert (await js.get_msg(STREAM_RUNS, timer.seq)).data is not None
    await js.delete_msg(STREAM_RUNS, timer.seq)
    await kv.delete(konnect_key(spec.konnect_id))


async def _zero(count: Awaitable[int]) -> bool:
    return await count == 0


async def test_the_last_result_is_folded_into_the_task_event(nc: NATS) -> None:
    """Under the fail policy the worker's journal keeps the last result for the run's TaskEvent
    (issue 34): a later step with effects, flush() or a run that does not end stores it; discard() (the
    event stored) leaves only the started mark."""
    kv = await nc.jetstream().key_value(KV_STEPS)
    run_id = secrets.token_hex(16)
    journal = StepJournal(kv, run_id, replay=False, fold_last=True)

    def result(step_id: str) -> StepResult:
        now = datetime.now(UTC)
        return StepResult(step_id=step_id, name=step_id, status="SUCCESS", started_at=now, finished_at=now,
                          input={}, output={})  # fmt: skip

    async def stored(step_id: str) -> bytes | None:
        try:
            return (await kv.get(step_key(run_id, step_id))).value
        except Exception:
            return None

    await journal.begin("a", None)
    await journal.record(result("a"), {"n": 1})
    assert (await stored("a") or b"").startswith(b'{"started":')  # kept, not put
    await journal.begin("b", None)  # a later step with effects: the result before it is stored first
    assert b'"status":"SUCCESS"' in (await stored("a") or b"")
    await journal.record(result("b"), {"n": 2})
    journal.discard()  # its TaskEvent was stored
    await journal.flush()
    assert (await stored("b") or b"").startswith(b'{"started":')
    # Kept, then the run does not end (handed back, suspended): flush() stores it.
    await journal.begin("c", None)
    await journal.record(result("c"), {"n": 3})
    await journal.flush()
    assert b'"status":"SUCCESS"' in (await stored("c") or b"")
    # Under the retry policy (no marks: a lost ack would repeat the step) nothing is kept.
    other = StepJournal(kv, run_id, replay=False, in_doubt="retry", fold_last=True)
    await other.record(result("d"), None)
    assert b'"status":"SUCCESS"' in (await stored("d") or b"")


async def test_a_finished_run_leaves_the_mark_of_its_last_step_only(
    shared_runner: RunningRunner, nc: NATS, echo: Any
) -> None:
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    steps = await js.key_value(KV_STEPS)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    async with httpx.AsyncClient(timeout=10) as http:
        reply = await http.post(f"{shared_runner.base}/hooks/{spec.trigger.token}", json={"order": {"id": 7}})
    assert reply.status_code == 200
    event, _ = await next_event(js, spec.konnect_id)
    assert event.status == "SUCCESS" and event.steps[-1].status == "SUCCESS"
    entry = await steps.get(step_key(reply.json()["run_id"], "node-2"))
    assert entry.value is not None and entry.value.startswith(b'{"started":')  # one KZ_STEPS write, not two
    await kv.delete(konnect_key(spec.konnect_id))


async def test_runs_finished_behind_one_that_goes_on_leave_kz_runs_too(
    shared_runner: RunningRunner, nc: NATS, echo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ack floor stops at a run that goes on (here one for a konnect not loaded, handed back again
    and again): the runs finished behind it are deleted one by one after STRAGGLER_SECONDS."""
    monkeypatch.setattr(worker_module, "STRAGGLER_SECONDS", 2.0)  # 4 s in a runner
    straggler_seconds = worker_module.STRAGGLER_SECONDS
    js = nc.jetstream()
    kv = await js.key_value(KV_KONNECTS)
    stuck = RunRequest(run_id=secrets.token_hex(16), konnect_id=secrets.randbelow(10**9) + 10**6,
                       trigger_output={}, received_at=datetime.now(UTC))  # fmt: skip
    held = await publish_run(js, stuck)
    spec = new_spec(echo.base + "/echo")
    await kv.put(konnect_key(spec.konnect_id), spec.model_dump_json().encode())
    await wait_until(lambda: shared_runner.runner.registry.by_id(spec.konnect_id) is not None)
    sent = len(echo.requests_to("/echo"))
    async with httpx.AsyncClient(timeout=10) as http:
        for n in range(3):
            assert (
                await http.post(f"{shared_runner.base}/hooks/{spec.trigger.token}", json={"n": n})
            ).status_code == 200
    await wait_until(lambda: len(echo.requests_to("/echo")) >= sent + 3, within=20)

    async def stored(konnect_id: int) -> int:
        info = await js.stream_info(STREAM_RUNS, subjects_filter=run_subject(konnect_id))
        return sum((info.state.subjects or {}).values())

    await wait_until(lambda: _zero(stored(spec.konnect_id)), within=straggler_seconds + 3 * SWEEP_SECONDS + 5)
    assert await stored(stuck.konnect_id) == 1  # the run that goes on stays
    await js.delete_msg(STREAM_RUNS, held.seq)
    await kv.delete(konnect_key(spec.konnect_id))
