"""Pytest fixtures with real components: PostgreSQL, NATS JetStream, SMTP sink, whole platform.

Registered for the whole workspace through ``-p konnectz_devstack.pytest_plugin``.
Each session gets its own servers on free ports with temporary state.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar

import pytest

from konnectz_devstack._nats import NatsServer
from konnectz_devstack._platform import Platform, Ports
from konnectz_devstack._ports import free_port
from konnectz_devstack._postgres import PostgresServer
from konnectz_devstack._smtp import SmtpSink


def _tempdir(prefix: str) -> Path:
    # Not under pytest's tmp_path: its parents are private to root, and PostgreSQL runs as
    # another user when we are root.
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


class _Server(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


S = TypeVar("S", bound=_Server)


@contextlib.contextmanager
def serving(prefix: str, make: Callable[[Path], S]) -> Iterator[S]:
    """``make(folder)``'s server started with its state in a fresh temporary folder (named
    ``prefix…``); stopped and the folder removed after the block."""
    base = _tempdir(prefix)
    server = make(base)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with serving("konnectz-pg-", lambda base: PostgresServer(base, free_port())) as server:
        yield server


@pytest.fixture(scope="session")
def nats_server() -> Iterator[NatsServer]:
    with serving("konnectz-nats-", lambda base: NatsServer(base, free_port())) as server:
        yield server
        # Every test connects as the component it exercises: a refusal is a grant missing from
        # konnectz_contracts.nats_auth (tests of refusals use a NATS of their own).
        refused = server.violations()
        if refused:
            pytest.fail("NATS refused a component:\n" + "\n".join(refused[:20]), pytrace=False)


@pytest.fixture(scope="session")
def smtp_sink() -> Iterator[SmtpSink]:
    with serving("konnectz-mail-", lambda base: SmtpSink(base / "mail", free_port())) as sink:
        yield sink


def make_platform(state_dir: Path, **extra_env: str) -> Platform:
    ports = Ports(api=free_port(), runner=free_port(), postgres=free_port(), nats=free_port(), smtp=free_port())
    return Platform(
        state_dir=state_dir,
        ports=ports,
        env="test",
        quiet=True,
        extra_env={
            # Tests post to their own local HTTP servers from flows.
            "KONNECTZ_ALLOW_PRIVATE_NETWORKS": "127.0.0.0/8",
            "KONNECTZ_CAPTCHA_MAX_NUMBER": "2000",
            # Every test signs its users up from 127.0.0.1: the per-client mail limit is tested on its own.
            "KONNECTZ_MAIL_MAX_PER_ADDRESS": "100000",
            "KONNECTZ_MAIL_MAX_PER_EMAIL": "1000",
            # A synchronous database call on the api's event loop is refused (a 500 the test sees, and
            # a BlockingOnLoop traceback in api.log), not only logged (docs/concurrency.md).
            "KONNECTZ_LOOP_GUARD": "raise",
            **extra_env,
        },
    )


@contextlib.contextmanager
def running_platform(prefix: str, **extra_env: str) -> Iterator[Platform]:
    """A whole platform of its own (:func:`make_platform` in a fresh state directory), started, then
    stopped and its state removed, for a test that needs settings of its own."""
    state = _tempdir(prefix)
    plat = make_platform(state, **extra_env)
    plat.start()
    try:
        yield plat
    finally:
        plat.stop()
        refused = plat.nats.violations()
        shutil.rmtree(state, ignore_errors=True)
    if refused:
        pytest.fail("NATS refused a component:\n" + "\n".join(refused[:20]), pytrace=False)


@pytest.fixture(scope="session")
def platform() -> Iterator[Platform]:
    """The whole platform (api + runner + PostgreSQL + NATS + SMTP sink) as ``make dev`` runs it."""
    state = _tempdir("konnectz-platform-")
    web_dist = Path(__file__).resolve().parents[3] / "web" / "dist"
    plat = make_platform(state)
    if web_dist.exists():
        plat.web_dist = web_dist
    plat.start()
    yield plat
    plat.stop()
    refused = plat.nats.violations()
    shutil.rmtree(state, ignore_errors=True)
    if refused:  # as for nats_server: the api and the runner stayed within their grants
        pytest.fail("NATS refused a component:\n" + "\n".join(refused[:20]), pytrace=False)
