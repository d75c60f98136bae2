"""The api's NATS connection as the api user: a refused password is one log line and /healthz's reason,
not a traceback per reconnect attempt."""

from __future__ import annotations

import asyncio
import logging
import tempfile
from pathlib import Path

import pytest

from konnectz_api.bus import Bus
from konnectz_contracts.nats_auth import API, connect_options
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import free_port


async def test_a_refused_api_user_is_logged_once_and_named_by_healthz(caplog: pytest.LogCaptureFixture) -> None:
    server = NatsServer(Path(tempfile.mkdtemp(prefix="konnectz-nats-bus-")), free_port())
    server.start()
    try:
        bus = Bus(server.url, connect_options(API, "wrong"))
        with caplog.at_level(logging.DEBUG, logger="konnectz_api.bus"):
            bus.start()
            for _ in range(150):  # a loaded machine may time a first attempt out
                if bus.last_error is not None and "Authorization Violation" in bus.last_error:
                    break
                await asyncio.sleep(0.1)
            assert bus.last_error is not None and "Authorization Violation" in bus.last_error
            await asyncio.sleep(3)  # more refused reconnect attempts
            assert not bus.ready.is_set()
            await bus.close(1.0)
        refusals = [r for r in caplog.records if "Authorization Violation" in r.getMessage()]
        assert len(refusals) == 1 and refusals[0].levelno == logging.ERROR, [r.getMessage() for r in refusals]
        assert not any(r.exc_info for r in caplog.records)

        good = Bus(server.url, connect_options(API, server.passwords[API]))
        good.start()
        await asyncio.wait_for(good.ready.wait(), 20)  # the api user creates the streams it uses
        await good.close(2.0)
    finally:
        server.stop()
