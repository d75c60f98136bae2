"""One log line per state change of a dependency, not one per failed attempt."""

from __future__ import annotations

import logging

import pytest

from konnectz_runner.outage import Outage


def test_an_outage_logs_when_it_starts_and_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="konnectz.test")
    outage = Outage("PostgreSQL", logging.getLogger("konnectz.test"))
    outage.ok()  # nothing to say while it works
    for _ in range(100):
        outage.failed(ConnectionRefusedError("connection refused\nsecond line"), " (retrying)")
    assert outage.down and outage.last_error == "ConnectionRefusedError: connection refused"
    outage.ok()
    outage.ok()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert len(lines) == 2
    assert lines[0] == (
        "WARNING",
        "PostgreSQL unavailable (retrying) (ConnectionRefusedError: connection refused); retrying quietly",
    )
    assert lines[1][0] == "INFO" and lines[1][1].startswith("PostgreSQL available again after ")
    assert not any(r.exc_info for r in caplog.records)
    assert not outage.down
