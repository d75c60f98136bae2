"""Stopping tasks for sure (:mod:`konnectz_runner.tasks`): a cancellation lost by ``asyncio.wait_for``."""

from __future__ import annotations

import asyncio
import sys

import pytest

from konnectz_runner import tasks
from konnectz_runner.tasks import stop_task, stop_tasks


def _poller(replies: list[int]) -> asyncio.Task[None]:
    """A loop shaped like the runner's NATS pollers: each round awaits a reply with ``wait_for`` (as
    nats-py's request does); the reply here always lands in the same loop iteration as a cancel."""
    loop = asyncio.get_running_loop()

    async def poll() -> None:
        while True:
            reply: asyncio.Future[int] = loop.create_future()
            loop.call_soon(reply.set_result, 1)
            replies.append(await asyncio.wait_for(reply, 5))
            await asyncio.sleep(0.01)

    return asyncio.create_task(poll(), name="poller")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython gh-86296 is fixed in 3.12")
async def test_python_311_wait_for_loses_a_cancel_that_meets_its_reply() -> None:
    """Why the runner cannot stop its loops with ``task.cancel(); await task``."""
    replies: list[int] = []
    task = _poller(replies)
    for _ in range(50):  # cancel while it waits for a reply, whatever the round
        await asyncio.sleep(0)
        if task._fut_waiter is not None and not isinstance(task._fut_waiter, asyncio.Task):  # type: ignore[attr-defined]
            break
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=0.5)
    try:
        assert not done, "the cancel was not lost: this Python does not have the bug stop_tasks works around"
        assert task.cancelling() == 1  # asked once, and it goes on polling
        before = len(replies)
        await asyncio.sleep(0.1)
        assert len(replies) > before
    finally:
        assert await stop_task(task, bound=5)
    assert task.cancelled()


async def test_stop_task_ends_a_loop_that_lost_its_cancel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tasks, "AGAIN_SECONDS", 0.05)
    for _ in range(20):
        replies: list[int] = []
        task = _poller(replies)
        await asyncio.sleep(0.02)
        assert await stop_task(task, bound=5)
        assert task.done()


async def test_stop_tasks_is_bounded_and_names_what_did_not_stop(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tasks, "AGAIN_SECONDS", 0.05)
    stubborn_cancels = 0
    release = asyncio.Event()

    async def stubborn() -> None:
        nonlocal stubborn_cancels
        while not release.is_set():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                stubborn_cancels += 1

    async def fails() -> None:
        raise RuntimeError("its own error")

    bad = asyncio.create_task(stubborn(), name="stubborn")
    failed = asyncio.create_task(fails(), name="fails")
    await asyncio.sleep(0)
    left = await stop_tasks([bad, None, failed], bound=0.3)
    assert left == {bad}
    assert stubborn_cancels >= 3  # cancelled again while it went on
    assert "did not stop within 0 s: ['stubborn']" in caplog.text
    release.set()
    bad.cancel()
    await asyncio.wait({bad}, timeout=1)
    assert failed.done() and isinstance(failed.exception(), RuntimeError)
