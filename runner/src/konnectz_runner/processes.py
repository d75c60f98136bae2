"""A runner of several processes sharing one listening socket (``KONNECTZ_RUNNER_PROCESSES``).

One Python interpreter executes on one core at a time (the GIL), and under load a runner's webhook
ingress and run execution fill that core. With ``KONNECTZ_RUNNER_PROCESSES=N`` the ``serve`` command
binds the port once and starts N ``serve`` children on that socket: the kernel hands each new
connection to one of them, and every child pulls runs from the same JetStream consumer, so execution
spreads over the children whichever of them accepted the webhook. The first child is the primary
(schedules and polls, ``KONNECTZ_RUNNER_PRIMARY``); the others serve webhooks and execute runs.

Each child holds every konnect (its own registry), so memory grows with N. The parent forwards
SIGTERM/SIGINT to the children and waits for them; when one child dies unexpectedly it stops the
others and exits with an error, so the supervisor above it (``make dev``, Kubernetes) restarts the
runner as one unit.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from types import FrameType

__all__ = ["serve_processes"]

PR_SET_PDEATHSIG = 1

log = logging.getLogger(__name__)


def _die_with_parent() -> None:
    """In the child, before exec: the kernel kills it when the parent dies (even by SIGKILL), so a
    crashed runner leaves no orphan holding its port and its runs."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def serve_processes(host: str, port: int, processes: int) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    fd = sock.fileno()
    children: list[subprocess.Popen[bytes]] = []
    for index in range(processes):
        env = {**os.environ, "KONNECTZ_RUNNER_PROCESSES": "1", "KONNECTZ_RUNNER_PRIMARY": str(index == 0).lower()}
        children.append(
            subprocess.Popen(
                [sys.executable, "-m", "konnectz_runner", "serve", "--fd", str(fd)],
                env=env,
                pass_fds=(fd,),
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        )
    sock.close()
    log.info("Runner on %s:%d with %d processes (pids %s)", host, port, processes, [c.pid for c in children])
    stopping = False

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = 0
    while any(c.poll() is None for c in children):
        dead = [c for c in children if c.poll() is not None]
        if dead and not stopping:
            code = 1
            log.error("Runner process %d exited with %s; stopping the others", dead[0].pid, dead[0].returncode)
            forward(signal.SIGTERM, None)
        time.sleep(0.2)
    if not stopping and code == 0:
        code = next((c.returncode for c in children if c.returncode), 0)
    return code
