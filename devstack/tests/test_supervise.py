"""The devstack supervisor restarts a dead child with backoff and says so in one line each."""

from __future__ import annotations

import io
import subprocess
import sys
import time

from konnectz_devstack._supervise import Child, Supervisor


def test_a_dead_child_is_restarted_with_backoff() -> None:
    procs: list[subprocess.Popen[bytes]] = []

    def spawn() -> None:
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))

    def alive() -> str | None:
        code = procs[-1].poll()
        return None if code is None else f"exited (code {code})"

    spawn()
    out = io.StringIO()
    supervisor = Supervisor([Child("runner", alive, spawn)], out=out)
    try:
        supervisor.check()
        assert out.getvalue() == ""
        procs[-1].kill()
        procs[-1].wait()
        supervisor.check()
        assert out.getvalue() == "make dev: runner exited (code -9); restarting in 0.5 s\n"
        supervisor.check()  # not before the backoff
        assert len(procs) == 1
        time.sleep(0.6)
        supervisor.check()
        assert len(procs) == 2 and procs[-1].poll() is None
        assert out.getvalue().splitlines()[-1] == "make dev: runner is running again (restart 1)"
        procs[-1].kill()  # dying again soon after: the backoff doubled
        procs[-1].wait()
        supervisor.check()
        assert out.getvalue().splitlines()[-1] == "make dev: runner exited (code -9); restarting in 1.0 s"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_failed_restart_is_tried_again_later() -> None:
    attempts: list[float] = []

    def broken() -> None:
        attempts.append(time.monotonic())
        raise RuntimeError("Port 14222 (NATS) is busy")

    out = io.StringIO()
    supervisor = Supervisor([Child("NATS", lambda: "exited", broken, backoff=0.0)], out=out)
    supervisor.check()
    supervisor.check()
    assert len(attempts) == 1
    assert out.getvalue().splitlines() == [
        "make dev: NATS exited; restarting in 0.0 s",
        "make dev: NATS did not restart (Port 14222 (NATS) is busy); trying again in 0.0 s",
    ]
