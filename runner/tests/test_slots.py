"""Konnect run slots (konnectz_runner.work.slots) against a real nats-server: several acquirers in two
"processes" (two connections), never more than the limit, FIFO by arrival, a dead holder recovered."""

from __future__ import annotations

import asyncio
import secrets

import nats
import pytest

from konnectz_runner.work.slots import Slots, slots_bucket

pytestmark = pytest.mark.integration


async def _two_runners(nats_server, lease: float = 30.0) -> tuple[list[Slots], list]:
    conns = [await nats.connect(nats_server.admin_url) for _ in range(2)]
    bucket = f"SLOTS_{secrets.token_hex(4)}"
    slots = [Slots(await slots_bucket(nc.jetstream(), bucket=bucket), lease=lease, poll=0.02) for nc in conns]
    return slots, conns


@pytest.mark.parametrize("limit", [1, 3])
async def test_never_more_than_the_limit_and_first_come_first_served(nats_server, limit: int) -> None:
    slots, conns = await _two_runners(nats_server)
    running: set[str] = set()
    most = 0
    started: list[int] = []
    queued: list[int] = []

    async def run(seq: int) -> None:
        nonlocal most
        mine = slots[seq % 2]  # alternate between the two runners
        await asyncio.sleep(seq * 0.01)  # arrive in sequence order

        async def on_queued() -> None:
            queued.append(seq)

        await mine.acquire(77, f"run-{seq}", seq, limit, on_queued=on_queued)
        running.add(f"run-{seq}")
        started.append(seq)
        most = max(most, len(running))
        await asyncio.sleep(0.05)
        running.discard(f"run-{seq}")
        await mine.release(77, f"run-{seq}")

    try:
        await asyncio.wait_for(asyncio.gather(*(run(seq) for seq in range(1, 25))), 60)
        assert most == limit
        assert sorted(started) == list(range(1, 25))
        assert queued, "some runs had to wait"
        # Waiting runs start in the order they arrived (their stream sequence).
        waited = [seq for seq in started if seq in queued]
        assert waited == sorted(waited)
        assert await slots[0].holders(77) == ([], [])
    finally:
        for nc in conns:
            await nc.close()


async def test_a_dead_holder_is_dropped_when_its_lease_runs_out(nats_server) -> None:
    slots, conns = await _two_runners(nats_server, lease=1.0)
    try:
        assert await slots[0].try_acquire(5, "dead", 1, 1)  # its runner then dies: no renewals
        assert not await slots[1].try_acquire(5, "next", 2, 1)
        assert await slots[1].holders(5) == (["dead"], ["next"])
        waited = asyncio.get_running_loop().time()
        await asyncio.wait_for(slots[1].acquire(5, "next", 2, 1), 10)
        assert asyncio.get_running_loop().time() - waited < 5
        assert await slots[1].holders(5) == (["next"], [])
    finally:
        for nc in conns:
            await nc.close()


async def test_a_renewed_holder_keeps_its_slot_and_a_redelivered_run_finds_it(nats_server) -> None:
    slots, conns = await _two_runners(nats_server, lease=1.0)
    try:
        assert await slots[0].try_acquire(6, "alive", 1, 1)
        keeper = asyncio.create_task(slots[0].keep(6, "alive"))
        await asyncio.sleep(2.5)  # past two leases, renewed meanwhile
        assert not await slots[1].try_acquire(6, "other", 2, 1)
        assert await slots[1].try_acquire(6, "alive", 1, 1)  # the same run, delivered again elsewhere
        keeper.cancel()
        await slots[0].release(6, "alive")
        assert await slots[1].try_acquire(6, "other", 2, 1)
    finally:
        for nc in conns:
            await nc.close()
