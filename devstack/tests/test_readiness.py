"""``make dev``'s readiness wait on a port of the ephemeral range: a connection to a loopback port nothing
listens on yet can connect to itself (the kernel chose the same port as its source: a TCP simultaneous
open), and then reads its own request back as the reply. That is "not ready yet", like a refused
connection or a reply that is not HTTP; at the deadline one line says why, never a traceback."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from konnectz_devstack import DevStackError, _ports
from konnectz_devstack._platform import Platform, Ports


def _ephemeral_port() -> int:
    """A port of the ephemeral range that nothing listens on (the kernel's own choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _self_connected(address: tuple[str, int]) -> socket.socket:
    """What an unlucky connection to ``address`` gets: a socket connected to itself."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.connect(address)
    return sock


@pytest.fixture
def every_connection_reaches_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each connection made in the test takes its destination port as its source, as the kernel
    sometimes does on its own for a port of the ephemeral range."""

    def create_connection(address: tuple[str, int], timeout: float | None = None, *args: object, **kw: object):
        sock = _self_connected(address)
        sock.settimeout(timeout)
        return sock

    monkeypatch.setattr(socket, "create_connection", create_connection)


@pytest.fixture
def not_http() -> Iterator[int]:
    """A loopback port whose server answers every connection with a line that is not HTTP."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(5)
    server.close()


def _platform(tmp_path: Path, **ports: int) -> Platform:
    return Platform(state_dir=tmp_path, ports=Ports(**ports), quiet=True)


def test_a_self_connected_socket_is_detected() -> None:
    port = _ephemeral_port()
    with _self_connected(("127.0.0.1", port)) as sock:
        assert sock.getsockname() == sock.getpeername()
        assert _ports.is_self_connected(sock)
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()) as sock:
            assert not _ports.is_self_connected(sock)


def test_a_readiness_wait_that_reaches_itself_waits_and_says_why(tmp_path, every_connection_reaches_itself) -> None:
    port = _ephemeral_port()
    started = time.monotonic()
    with pytest.raises(DevStackError) as raised:
        _platform(tmp_path, api=port)._wait_http("api", f"http://127.0.0.1:{port}/healthz", timeout=1.0)
    assert time.monotonic() - started >= 1.0  # it kept trying until the deadline
    message = str(raised.value)
    assert "\n" not in message, message
    assert message.startswith(f"api did not become ready at http://127.0.0.1:{port}/healthz"), message
    assert "connected to itself" in message, message


def test_a_port_wait_that_reaches_itself_is_not_ready(every_connection_reaches_itself) -> None:
    assert _ports.wait_for_port(_ephemeral_port(), timeout=0.5) is False


def test_a_reply_that_is_not_http_is_not_ready_yet(tmp_path, not_http) -> None:
    with pytest.raises(DevStackError) as raised:
        _platform(tmp_path)._wait_http("runner", f"http://127.0.0.1:{not_http}/healthz", timeout=1.0)
    message = str(raised.value)
    assert "\n" not in message, message
    assert "not an HTTP reply" in message, message


def test_nothing_listening_in_the_ephemeral_range_ends_with_one_line(tmp_path) -> None:
    port = _ephemeral_port()
    with pytest.raises(DevStackError) as raised:
        _platform(tmp_path)._wait_http("api", f"http://127.0.0.1:{port}/healthz", timeout=0.5)
    assert "\n" not in str(raised.value) and "refused" in str(raised.value).lower(), raised.value


def test_a_port_in_the_ephemeral_range_gets_a_note(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_ports, "ephemeral_range", lambda: (32768, 60999))
    assert _platform(tmp_path).ephemeral_note() is None  # the defaults are below the range
    note = _platform(tmp_path, api=40000, runner=40001).ephemeral_note()
    assert note is not None and "\n" not in note
    assert "api (40000)" in note and "runner (40001)" in note and "32768-60999" in note


def test_the_ephemeral_range_is_the_kernels() -> None:
    low, high = _ports.ephemeral_range()
    assert 1024 <= low <= _ephemeral_port() <= high <= 65535
