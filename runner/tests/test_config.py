import ipaddress
from pathlib import Path

import pytest

from konnectz_runner.config import Settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NATS_URL", "RUNNER_HOST", "RUNNER_PORT", "ALLOW_PRIVATE_NETWORKS", "SPEC_FILE"):
        monkeypatch.delenv(f"KONNECTZ_{name}", raising=False)
    settings = Settings()
    assert settings.nats_url == "nats://127.0.0.1:4222"
    assert (settings.runner_host, settings.runner_port) == ("127.0.0.1", 8081)
    assert settings.allow_private_networks == []
    assert settings.spec_file is None
    assert settings.http_timeout_seconds == 30
    assert settings.max_body_bytes == 1024 * 1024


def test_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KONNECTZ_NATS_URL", "nats://nats:4222")
    monkeypatch.setenv("KONNECTZ_RUNNER_PORT", "9000")
    monkeypatch.setenv("KONNECTZ_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8, 10.0.0.0/8,fd00::/8")
    monkeypatch.setenv("KONNECTZ_SPEC_FILE", "/etc/konnectz/flow.json")
    monkeypatch.setenv("KONNECTZ_MAX_BODY_BYTES", "2048")
    settings = Settings()
    assert settings.nats_url == "nats://nats:4222"
    assert settings.runner_port == 9000
    assert settings.allow_private_networks == [
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("fd00::/8"),
    ]
    assert settings.spec_file == Path("/etc/konnectz/flow.json")
    assert settings.max_body_bytes == 2048


def test_invalid_network_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KONNECTZ_ALLOW_PRIVATE_NETWORKS", "everything")
    with pytest.raises(ValueError):
        Settings()


def test_runner_processes_auto_is_one_per_core_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from konnectz_runner import config

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2})
    monkeypatch.setenv("KONNECTZ_RUNNER_PROCESSES", "auto")
    assert Settings().runner_processes == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(32)))
    assert Settings().runner_processes == config.MAX_AUTO_PROCESSES == 8
    monkeypatch.setenv("KONNECTZ_RUNNER_PROCESSES", "2")  # an explicit number wins
    assert Settings().runner_processes == 2
    monkeypatch.delenv("KONNECTZ_RUNNER_PROCESSES")
    assert Settings().runner_processes == 1  # the runner alone (Kubernetes, tests): one unless told
