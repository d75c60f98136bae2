"""The api as the benches run it: migrated by its own CLI, served by uvicorn in a process of its own.

Shared by test_api_bench.py (reads on a large kept database) and test_api_write_bench.py (writes on a
fresh small one). :func:`running_api` ends the process however it behaves: SIGTERM, then SIGKILL of
the process and its uvicorn workers when it does not stop in time (an api whose event loop is frozen
does not get to its own signal handler).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from konnectz_devstack._ports import free_port

SECRET = "bench-secret-key-0123456789abcdef0123456789"
ENCRYPTION_KEY = "bench-encryption-key-0123456789abcdef012345"


def api_env(database_url: str, nats: Any, **extra: str) -> dict[str, str]:
    """The environment of the api process (and of its migration): this process's, plus the bench's."""
    return {
        **os.environ,
        "KONNECTZ_ENV": "test",
        "KONNECTZ_DATABASE_URL": database_url,
        **nats.env("api"),  # a konnectz_devstack NatsServer: the api user
        "KONNECTZ_SECRET_KEY": SECRET,
        "KONNECTZ_ENCRYPTION_KEY": ENCRYPTION_KEY,
        **extra,
    }


def migrate(env: dict[str, str]) -> None:
    """The database of ``env`` migrated to the newest revision."""
    subprocess.run([sys.executable, "-c", "from konnectz_api.migrate import upgrade; upgrade()"], env=env, check=True)


@dataclass
class ApiProcess:
    url: str
    proc: subprocess.Popen[bytes]

    def pids(self) -> list[int]:
        """The uvicorn process and its workers (``--workers`` > 1 forks them)."""
        return [self.proc.pid, *descendants(self.proc.pid)]


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc), children first."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids = [int(p) for p in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *descendants(kid)]
    return found


def _stop(proc: subprocess.Popen[bytes], timeout: float) -> None:
    pids = [proc.pid, *descendants(proc.pid)]
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in pids:  # only the processes this bench started: uvicorn and its workers
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        proc.wait(timeout=10)


@contextlib.contextmanager
def running_api(
    env: dict[str, str], *, workers: int, start_timeout: float = 60.0, stop_timeout: float = 30.0
) -> Iterator[ApiProcess]:
    """uvicorn serving the api with ``env`` on a free loopback port, answering /healthz; stopped after
    the block (killed after ``stop_timeout`` seconds)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "konnectz_api.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the api did not start within {start_timeout:.0f} s (exit code {proc.poll()})")
            time.sleep(0.2)
        yield ApiProcess(url, proc)
    finally:
        _stop(proc, stop_timeout)
