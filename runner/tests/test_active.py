"""KZ_ACTIVE / KZ_CANCELS helpers (konnectz_runner.bus.active) against a real NATS."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from nats.js.errors import NotFoundError

from konnectz_contracts.events import STREAM_RUNS, RunRequest, run_subject
from konnectz_contracts.run_control import ActiveRun, CancelRequest
from konnectz_runner.bus import (
    ActiveWatch,
    CancelBook,
    cancel_requested,
    get_active,
    list_active,
    request_cancel,
)
from konnectz_runner.bus import (
    clear_active as clear,
)
from konnectz_runner.bus import (
    mark_active as mark,
)
from konnectz_runner.bus import (
    run_state_buckets as buckets,
)
from konnectz_runner.bus import (
    wake_waiting as wake,
)
from konnectz_runner.bus.timers import continuation_key, schedule_run, timer_subject

pytestmark = pytest.mark.integration


def _entry(konnect_id: int, status: str = "RUNNING", **extra: Any) -> ActiveRun:
    return ActiveRun(
        run_id=secrets.token_hex(8),
        konnect_id=konnect_id,
        owner_id=7,
        status=status,  # type: ignore[arg-type]
        since=datetime.now(UTC),
        **extra,
    )


async def test_mark_list_clear_only_the_konnects_entries(nc: Any) -> None:
    active, _cancels = await buckets(nc.jetstream())
    konnect = 900_000 + secrets.randbelow(10_000)
    first, second, other = _entry(konnect), _entry(konnect, "WAITING"), _entry(konnect + 1)
    for entry in (first, second, other):
        await mark(active, entry)
    listed = await list_active(active, 7, konnect)
    assert [run.run_id for run in listed] == [first.run_id, second.run_id]
    assert listed[1].status == "WAITING"
    await clear(active, 7, konnect, first.run_id)
    await clear(active, 7, konnect, "never-there")  # no error
    assert [run.run_id for run in await list_active(active, 7, konnect)] == [second.run_id]
    assert await list_active(active, 8, konnect) == []


async def test_a_short_run_writes_no_entry_and_a_long_one_is_listed_with_its_current_step(nc: Any) -> None:
    active, _cancels = await buckets(nc.jetstream())
    konnect = 900_000 + secrets.randbelow(10_000)
    seq_before = (await nc.jetstream().stream_info("KV_KZ_ACTIVE")).state.last_seq

    short = ActiveWatch(active, None, _entry(konnect), listed_after=0.3)
    await short.at_step("node-2")
    await short.at_step("node-3")
    await short.done()
    await asyncio.sleep(0.4)  # past listed_after: the timer was cancelled, nothing is written late
    assert (await nc.jetstream().stream_info("KV_KZ_ACTIVE")).state.last_seq == seq_before

    slow = ActiveWatch(active, None, _entry(konnect), listed_after=0.2)
    await slow.at_step("node-2")
    assert await get_active(active, 7, konnect, slow.entry.run_id) is None
    await slow.at_step("node-3")
    await asyncio.sleep(0.35)
    listed = await get_active(active, 7, konnect, slow.entry.run_id)
    assert listed is not None and listed.step_id == "node-3"  # the step at the moment it was listed
    await slow.at_step("node-4")  # kept current once listed
    listed = await get_active(active, 7, konnect, slow.entry.run_id)
    assert listed is not None and listed.step_id == "node-4"
    await slow.done()
    assert await get_active(active, 7, konnect, slow.entry.run_id) is None

    # A run that waits in a delay leaves the worker: listed at once, whatever listed_after says.
    waiting = ActiveWatch(active, None, _entry(konnect), listed_after=30)
    await waiting.at_step("node-2")
    await waiting.waiting("node-2", datetime.now(UTC) + timedelta(hours=1))
    listed = await get_active(active, 7, konnect, waiting.entry.run_id)
    assert listed is not None and listed.status == "WAITING"
    await clear(active, 7, konnect, waiting.entry.run_id)


async def test_the_listing_write_and_done_do_not_race(nc: Any) -> None:
    """done() right as the timer fires: the entry written by the timer is deleted, never left behind."""
    active, _cancels = await buckets(nc.jetstream())
    konnect = 900_000 + secrets.randbelow(10_000)
    for _ in range(20):
        watch = ActiveWatch(active, None, _entry(konnect), listed_after=0.01)
        await watch.at_step("node-2")
        await asyncio.sleep(0.01)
        await watch.done()
    assert await list_active(active, 7, konnect) == []


async def test_cancel_request_round_trip(nc: Any) -> None:
    _active, cancels = await buckets(nc.jetstream())
    run_id = secrets.token_hex(8)
    assert await cancel_requested(cancels, run_id) is None
    await request_cancel(cancels, CancelRequest(run_id=run_id, by="ann@example.com", at=datetime.now(UTC)))
    found = await cancel_requested(cancels, run_id)
    assert found is not None and found.by == "ann@example.com"


async def test_the_cancel_book_answers_from_its_watch_and_reads_until_it_has_caught_up(nc: Any) -> None:
    _active, cancels = await buckets(nc.jetstream())
    earlier, later = secrets.token_hex(8), secrets.token_hex(8)
    await request_cancel(cancels, CancelRequest(run_id=earlier, by="ann@example.com", at=datetime.now(UTC)))
    book = CancelBook(cancels, nc)
    assert not book.live
    assert await book.cancelled_by(earlier) == "ann@example.com"  # not caught up yet: read
    book.start()
    try:
        for _ in range(200):
            if book.live:
                break
            await asyncio.sleep(0.01)
        assert book.live
        assert await book.cancelled_by(earlier) == "ann@example.com"  # a value stored before the watch
        await request_cancel(cancels, CancelRequest(run_id=later, by="bob@example.com", at=datetime.now(UTC)))
        for _ in range(200):
            if await book.cancelled_by(later):
                break
            await asyncio.sleep(0.01)
        assert await book.cancelled_by(later) == "bob@example.com"
        await cancels.delete(f"cancel.{later}")
        for _ in range(200):
            if await book.cancelled_by(later) is None:
                break
            await asyncio.sleep(0.01)
        assert await book.cancelled_by(later) is None
        assert await book.cancelled_by(secrets.token_hex(8)) is None
        # Answers come from memory now: a value the watch has not delivered is not read from the bucket.
        book._by.pop(earlier)
        assert await book.cancelled_by(earlier) is None
    finally:
        await book.stop()


async def test_wake_moves_the_timer_to_now(nc: Any) -> None:
    js = nc.jetstream()
    konnect = 910_000 + secrets.randbelow(10_000)
    run = RunRequest(
        run_id=secrets.token_hex(8), konnect_id=konnect, trigger_output={"a": 1}, received_at=datetime.now(UTC)
    )
    key = continuation_key(run.run_id, "delay-1")
    await schedule_run(js, run, datetime.now(UTC) + timedelta(hours=1), key=key)
    sub = await js.subscribe(run_subject(konnect), stream=STREAM_RUNS)
    waiting = _entry(konnect, "WAITING", step_id="delay-1").model_copy(update={"run_id": run.run_id})
    assert await wake(js, waiting) is True
    msg = await sub.next_msg(timeout=5)
    assert RunRequest.model_validate_json(msg.data).run_id == run.run_id
    # The timer is gone: waking again finds nothing, and it never fires later.
    with pytest.raises(NotFoundError):
        await js.get_last_msg(STREAM_RUNS, timer_subject(konnect, key))
    assert await wake(js, waiting) is False
    await sub.unsubscribe()
