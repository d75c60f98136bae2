"""``python -m konnectz_runner serve`` as a real process: ready, serving, clean exit on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import httpx
import pytest

from konnectz_contracts.nats_auth import RUNNER
from konnectz_devstack._ports import free_port

pytestmark = pytest.mark.integration


async def test_serve_process_answers_health_and_stops_on_sigterm(nats_server: Any) -> None:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "konnectz_runner", "serve", "--host", "127.0.0.1", "--port", str(port),
        env={**os.environ, **nats_server.env(RUNNER)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(timeout=2) as http:
            for _ in range(200):
                try:
                    reply = await http.get(f"http://127.0.0.1:{port}/healthz")
                    break
                except httpx.TransportError:
                    assert proc.returncode is None, "the runner exited early"
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("the runner did not start")
            assert reply.status_code == 200 and reply.json() == {"status": "ok"}
            unknown = await http.post(f"http://127.0.0.1:{port}/hooks/{'x' * 40}", json={})
            assert unknown.status_code == 404
        # A stuck runner can be asked where it is: SIGUSR1 prints every thread's stack and changes nothing.
        proc.send_signal(signal.SIGUSR1)
        # ... and SIGUSR2 every asyncio task of its two loops (the ingress's and the run worker's).
        proc.send_signal(signal.SIGUSR2)
        await asyncio.sleep(0.5)
        # A client that never finishes its body does not hold the process after SIGTERM (uvicorn gives open
        # connections at most SHUTDOWN_CONNECTIONS_SECONDS; today it ends a half-read request at once).
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /hooks/{'y' * 40} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
        await writer.drain()
        await asyncio.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(proc.communicate(), 30)
        writer.close()
        assert b"Current thread" in output or b"Thread 0x" in output, output.decode()
        assert b"--- asyncio loop 'ingress' (running)" in output, output.decode()
        assert b"--- asyncio loop 'run worker' (running)" in output, output.decode()
        assert b"Stack for <Task" in output, output.decode()
        # uvicorn shuts the app down (worker stopped, NATS drained), then re-raises the signal it caught.
        assert proc.returncode in (0, -signal.SIGTERM), output.decode()
        assert b"Runner ready" in output
        assert b"Application shutdown complete" in output
        assert b"Traceback (most recent call last)" not in output
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_serve_fails_cleanly_on_a_bad_spec_file(nats_server: Any, tmp_path: Any) -> None:
    bad = tmp_path / "flow.json"
    bad.write_text("{}")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "konnectz_runner", "serve", "--port", str(free_port()),
        env={**os.environ, **nats_server.env(RUNNER), "KONNECTZ_SPEC_FILE": str(bad)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode != 0
    assert b"not a valid flow spec" in output


def test_serve_without_a_catalogue_exits_at_once(tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "KONNECTZ_CATALOGUE_DIR": str(tmp_path / "missing"), "KONNECTZ_NATS_URL": "nats://127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, "-m", "konnectz_runner", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"konnectz-runner: cannot start: app catalogue: {tmp_path / 'missing' / 'apps'}: no such catalogue directory"
        " (set KONNECTZ_CATALOGUE_DIR)"
    ]
