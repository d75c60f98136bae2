"""The checks that keep the event loop free (issue 32): the loop guard on the synchronous engine, and
the request deadline.

The guard is what the whole api suite runs with (``KONNECTZ_LOOP_GUARD=raise`` and the autouse
fixture ``nothing_blocked_the_event_loop``): here it is shown refusing a deliberately blocking call.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from konnectz_api.core import loopguard
from konnectz_api.pressure import DEADLINE_RETRY_AFTER_SECONDS, DeadlineMiddleware


@pytest.fixture
def engine(postgres_server):
    made = create_engine(postgres_server.url)
    yield made
    made.dispose()


def _select_one(engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT 1")).scalar_one())


def test_a_synchronous_query_on_the_event_loop_is_refused_and_recorded(engine):
    loopguard.guard_engine(engine, "raise")
    before = len(loopguard.VIOLATIONS)

    async def blocking_route() -> int:
        loopguard.watch(asyncio.get_running_loop())  # as the api's lifespan does
        return _select_one(engine)  # the defect: sync I/O inside async code

    with pytest.raises(loopguard.BlockingOnLoop, match=r"on the event loop at .*test_loop_guard\.py"):
        asyncio.run(blocking_route())
    found = loopguard.VIOLATIONS[before:]
    assert len(found) == 1 and "_select_one" in found[0][0]
    del loopguard.VIOLATIONS[before:]  # shown on purpose: not this test's failure

    async def threaded_route() -> int:
        loopguard.watch(asyncio.get_running_loop())
        return await asyncio.to_thread(_select_one, engine)  # the fix: in a worker thread

    async def someone_elses_loop() -> int:
        return _select_one(engine)  # a loop the api did not register (a test's own)

    assert asyncio.run(threaded_route()) == 1
    assert asyncio.run(someone_elses_loop()) == 1
    assert _select_one(engine) == 1  # no loop running: not guarded
    assert len(loopguard.VIOLATIONS) == before


def test_in_log_mode_each_blocking_site_is_one_warning(engine, caplog):
    loopguard.guard_engine(engine, "log")

    async def twice() -> None:
        loopguard.watch(asyncio.get_running_loop())
        _select_one(engine)
        _select_one(engine)

    with caplog.at_level(logging.WARNING, logger=loopguard.__name__):
        asyncio.run(twice())
        asyncio.run(twice())
    warnings = [r for r in caplog.records if "on the event loop" in r.getMessage()]
    assert len(warnings) == 1 and "_select_one" in warnings[0].getMessage()


def test_the_guard_off_adds_nothing(engine):
    loopguard.guard_engine(engine, "off")

    async def blocking() -> int:
        loopguard.watch(asyncio.get_running_loop())
        return _select_one(engine)

    assert asyncio.run(blocking()) == 1


def _slow_app(release: threading.Event) -> FastAPI:
    app = FastAPI()

    @app.get("/sleepy")
    async def sleepy() -> dict[str, str]:
        await asyncio.sleep(30)
        return {"late": "yes"}

    @app.get("/stuck")
    def stuck() -> dict[str, str]:  # a thread that cannot be interrupted (a wait without a bound)
        release.wait(30)
        return {"late": "yes"}

    @app.get("/quick")
    async def quick() -> dict[str, str]:
        return {"ok": "yes"}

    app.add_middleware(DeadlineMiddleware, seconds=0.5)
    return app


def test_a_reply_not_started_by_the_deadline_is_a_503_with_retry_after(caplog):
    release = threading.Event()
    try:
        with TestClient(_slow_app(release)) as client, caplog.at_level(logging.WARNING):
            assert client.get("/quick").json() == {"ok": "yes"}
            for path in ("/sleepy", "/stuck"):
                started = time.monotonic()
                reply = client.get(path)
                took = time.monotonic() - started
                assert reply.status_code == 503, reply.text
                assert reply.headers["retry-after"] == str(DEADLINE_RETRY_AFTER_SECONDS)
                assert "could not answer within 0.5 s" in reply.json()["message"]
                assert took < 10, f"{path} answered after {took:.1f} s"
            assert client.get("/quick").status_code == 200
    finally:
        release.set()
    lines = [r.getMessage() for r in caplog.records if "request deadline" in r.getMessage()]
    assert len(lines) == 2 and "GET /stuck" in lines[1]
