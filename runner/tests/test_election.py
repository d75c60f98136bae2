"""The pool's elected duty holder (konnectz_runner.clock.election) against a real nats-server."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable

import nats
import pytest

from konnectz_runner.clock import Election
from konnectz_runner.clock.election import leaders_bucket

pytestmark = pytest.mark.integration

TTL = 1.5


class Duties:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log
        self.active = False

    async def elected(self) -> None:
        self.active = True
        self.log.append(f"+{self.name}")

    async def deposed(self) -> None:
        self.active = False
        self.log.append(f"-{self.name}")


async def _until(predicate: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - polling the candidates' state
            await asyncio.sleep(0.05)


async def test_one_holder_among_three_and_a_stopped_holder_hands_over(nats_server) -> None:
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    bucket = f"LEADERS_{secrets.token_hex(4)}"
    await leaders_bucket(js, TTL, bucket=bucket)
    name = "duties"
    log: list[str] = []
    duties = [Duties(f"r{i}", log) for i in range(3)]
    elections = [
        Election(js, name, on_elected=d.elected, on_deposed=d.deposed, ttl=TTL, holder=d.name, bucket=bucket)
        for d in duties
    ]
    try:
        for election in elections:
            election.start()
        await _until(lambda: sum(d.active for d in duties) == 1)
        await asyncio.sleep(3 * TTL)  # renewals keep it: still exactly one, the same one
        assert sum(d.active for d in duties) == 1 and len(log) == 1
        first = next(i for i, d in enumerate(duties) if d.active)
        held = await (await js.key_value(bucket)).get(name)
        assert held.value == duties[first].name.encode()

        await elections[first].stop()  # frees the lock: another takes over within a retry
        assert not duties[first].active
        await _until(lambda: sum(d.active for d in duties) == 1, within=TTL * 2)
        assert log[:2] == [f"+{duties[first].name}", f"-{duties[first].name}"] and len(log) == 3
    finally:
        for election in elections:
            await election.stop()
        await nc.close()


async def test_a_holder_that_loses_the_lock_stops_its_duties_at_once(nats_server) -> None:
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    bucket = f"LEADERS_{secrets.token_hex(4)}"
    kv = await leaders_bucket(js, TTL, bucket=bucket)
    name = "duties"
    log: list[str] = []
    mine = Duties("mine", log)
    election = Election(
        js, name, on_elected=mine.elected, on_deposed=mine.deposed, ttl=TTL, holder="mine", bucket=bucket
    )
    try:
        election.start()
        await _until(lambda: mine.active)
        await kv.put(name, b"someone-else")  # another writer (a partition healed, an operator's hand)
        await _until(lambda: not mine.active, within=TTL)
        assert log == ["+mine", "-mine"]
        # The other holder's entry expires with the TTL (it does not renew): this one is elected again.
        await _until(lambda: mine.active, within=TTL * 3)
    finally:
        await election.stop()
        await nc.close()
