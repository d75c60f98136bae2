import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

# Ports are chosen below Linux's ephemeral range (32768-60999), so the kernel never hands one of
# them to an outgoing connection, and each is reserved across processes by a lock held for the
# life of the process that chose it: two pytest-xdist workers starting platforms at the same
# moment can no longer both pick the port the kernel just called free.
_LOW, _HIGH = 20000, 32700
_LOCK_DIR = Path(tempfile.gettempdir()) / "konnectz-ports"
_held: dict[int, int] = {}


def _reserve(port: int) -> bool:
    _LOCK_DIR.mkdir(exist_ok=True)
    fd = os.open(_LOCK_DIR / str(port), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _held[port] = fd
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` and that no other process on this machine chose through
    this function while it lives."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(_LOW, _HIGH)
        if port in _held or not port_is_free(port, host):
            continue
        if _reserve(port):
            if port_is_free(port, host):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (Linux's ``net.ipv4.ip_local_port_range``)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def is_self_connected(sock: socket.socket) -> bool:
    """Whether ``sock`` is connected to itself: a connection to a loopback port of the ephemeral range
    that nothing listens on can get that same port as its source, and then connects to itself (a TCP
    simultaneous open) - it reads back what it sends, and holds the port the server wants to listen on."""
    try:
        return bool(sock.getsockname() == sock.getpeername())
    except OSError:
        return False


def wait_for_port(port: int, host: str = "127.0.0.1", timeout: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5) as s:
                if not is_self_connected(s):
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False
