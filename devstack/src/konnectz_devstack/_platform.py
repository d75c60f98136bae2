"""The whole platform on one machine: PostgreSQL, NATS, SMTP sink, api and runner.

Used by ``make dev`` (fixed ports, state kept under ``.konnectz/``) and by the test suite
(free ports, temporary state).
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from konnectz_devstack import _aihost, _ports
from konnectz_devstack._errors import DevStackError
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._ports import is_self_connected, port_is_free
from konnectz_devstack._postgres import PostgresServer
from konnectz_devstack._smtp import SmtpSink
from konnectz_devstack._supervise import Child, Supervisor

REPO_ROOT = Path(__file__).resolve().parents[3]


def http_problem(url: str, timeout: float = 2.0) -> str | None:
    """None when ``url`` answers 200, else why not, in one line.

    A connection that reached itself (nothing listens yet on a port of the ephemeral range, and the
    kernel chose that same port as the source: see :func:`~konnectz_devstack._ports.is_self_connected`)
    is closed at once, before it sends anything, and is a reason like a refused connection; so is a
    reply that is not HTTP. The caller tries again until its deadline.
    """
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        conn.connect()
        if conn.sock is not None and is_self_connected(conn.sock):
            return f"the connection to port {parts.port} connected to itself (nothing listens there yet)"
        conn.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        resp = conn.getresponse()
        if resp.status == 200:
            return None
        return f"{resp.status} {resp.read(200)!r}"
    except OSError as exc:  # refused, reset, timed out, closed without a reply
        return str(exc) or type(exc).__name__
    except http.client.HTTPException as exc:
        return f"not an HTTP reply ({type(exc).__name__}: {str(exc)[:100]!r})"
    finally:
        conn.close()


@dataclass
class Ports:
    api: int = 8080
    runner: int = 8081
    postgres: int = 15432
    nats: int = 14222
    smtp: int = 1025


@dataclass
class Platform:
    state_dir: Path
    ports: Ports = field(default_factory=Ports)
    env: str = "dev"
    extra_env: dict[str, str] = field(default_factory=dict)
    web_dist: Path | None = None
    quiet: bool = False
    #: ``"flowise"`` starts the optional AI host (``make dev AI=flowise``), ``"scripted"`` the scripted model
    #: server (``make dev AI=scripted``); ``None`` runs without one.
    ai: str | None = None
    ai_port: int = 3000
    # Durability of the two stores. Development and tests default to fast: PostgreSQL without fsync,
    # JetStream with its default sync interval (2 minutes). pg_fsync=True and nats_sync="always" are
    # the durable settings (the chart's PostgreSQL default, and the documented JetStream option).
    pg_fsync: bool = False
    nats_sync: str | None = None

    def __post_init__(self) -> None:
        self.state_dir = Path(self.state_dir).resolve()
        self.postgres = PostgresServer(self.state_dir / "postgres", self.ports.postgres, fsync=self.pg_fsync)
        self.nats = NatsServer(self.state_dir / "nats", self.ports.nats, sync_interval=self.nats_sync)
        self.smtp = SmtpSink(self.state_dir / "mail", self.ports.smtp)
        self._procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self._args: dict[str, list[str]] = {}

    @property
    def durability(self) -> str:
        """One line saying how durable the stores are."""
        pg = "fsync on" if self.pg_fsync else "fsync off"
        js = f"sync_interval {self.nats_sync}" if self.nats_sync else "default sync (every 2 minutes)"
        lossy = (
            "" if self.pg_fsync and self.nats_sync == "always" else " - acknowledged data can be lost on power failure"
        )
        return f"PostgreSQL {pg}, NATS JetStream {js}{lossy}"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.api}"

    @property
    def runner_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.runner}"

    def _secret_file(self, name: str) -> str:
        """A random secret kept in the state folder, so tokens and ciphertexts survive restarts."""
        path = self.state_dir / "secrets" / name
        if not path.exists():
            import secrets

            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(48))
            path.chmod(0o600)
        return path.read_text().strip()

    def component_env(self, component: str = "api") -> dict[str, str]:
        """The environment of the api or the runner (``component``): each connects to NATS as its own user."""
        env = dict(os.environ)
        env.update(
            {
                "KONNECTZ_ENV": self.env,
                "KONNECTZ_DATABASE_URL": self.postgres.url,
                **self.nats.env(component),
                "KONNECTZ_SECRET_KEY": self._secret_file("secret_key"),
                "KONNECTZ_ENCRYPTION_KEY": self._secret_file("encryption_key"),
                # The runner hosts every konnect: it gets the credentials key and derives each
                # konnect's token for the api's credential broker (konnectz_contracts.broker_token).
                "KONNECTZ_CREDENTIALS_KEY": self._secret_file("credentials_key"),
                "KONNECTZ_CREDENTIALS_URL": f"{self.api_url}/api/v1/internal/credentials",
                "KONNECTZ_PUBLIC_URL": self.api_url,
                "KONNECTZ_WEBHOOK_BASE_URL": self.runner_url,
                "KONNECTZ_SMTP_HOST": "127.0.0.1",
                "KONNECTZ_SMTP_PORT": str(self.ports.smtp),
                "KONNECTZ_DEV_MAILDIR": str(self.smtp.maildir),
                "KONNECTZ_RUNNER_PORT": str(self.ports.runner),
                "KONNECTZ_RUNNER_HOST": "127.0.0.1",
            }
        )
        if self.env == "dev":
            # Local development calls local services from flows; production allows nothing private.
            env.setdefault("KONNECTZ_ALLOW_PRIVATE_NETWORKS", "127.0.0.0/8")
        if self.web_dist is not None:
            env["KONNECTZ_WEB_DIST"] = str(self.web_dist)
        if self.ai == "flowise":
            env["KONNECTZ_AI_HOST_URL"] = f"http://127.0.0.1:{self.ai_port}"
            env["KONNECTZ_AI_HOST_SECRET"] = self._secret_file("ai_host_secret")
        env.update(self.extra_env)
        return env

    @property
    def ai_url(self) -> str | None:
        """Where the AI host answers: Flowise's page, or the scripted model's base URL (an account's)."""
        if self.ai is None:
            return None
        return f"http://127.0.0.1:{self.ai_port}" + ("/v1" if self.ai == "scripted" else "")

    def _ready_url(self) -> str:
        return f"{self.ai_url}/models" if self.ai == "scripted" else f"http://127.0.0.1:{self.ai_port}/api/v1/ping"

    def _start_ai_host(self) -> None:
        """Flowise on ``ai_port`` with its own database in the dev PostgreSQL, or the scripted model server."""
        if self.ai not in _aihost.AI_HOSTS:
            raise DevStackError(f"Unknown AI host {self.ai!r}: choose one of {', '.join(_aihost.AI_HOSTS)}.")
        if not port_is_free(self.ai_port):
            raise DevStackError(f"Port {self.ai_port} (AI host) is busy: set KONNECTZ_AI_PORT.")
        if self.ai == "scripted":
            log = open(self.state_dir / "ai-host.log", "ab")
            proc = subprocess.Popen(
                _aihost.scripted_args(self.ai_port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            self._procs.append(("ai-host", proc))
            return
        args = _aihost.flowise_args()
        import psycopg

        with psycopg.connect(self.postgres.dsn, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'flowise'").fetchone() is None:
                conn.execute("CREATE DATABASE flowise")
        flowise_dsn = self.postgres.dsn.rsplit("/", 1)[0] + "/flowise"
        with psycopg.connect(flowise_dsn, autocommit=True) as conn:
            # Flowise's migrations call uuid_generate_v4() (extension uuid-ossp, which the embedded
            # PostgreSQL lacks): the built-in gen_random_uuid() does the same.
            conn.execute(
                "CREATE OR REPLACE FUNCTION uuid_generate_v4() RETURNS uuid LANGUAGE sql AS 'SELECT gen_random_uuid()'"
            )
        log = open(self.state_dir / "ai-host.log", "ab")
        env = {
            **os.environ,
            **_aihost.flowise_env(port=self.ai_port, state_dir=self.state_dir, pg_port=self.ports.postgres),
        }
        proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._procs.append(("ai-host", proc))

    def check_ports(self) -> None:
        busy = [f"{name} ({port})" for name, port in vars(self.ports).items() if not port_is_free(port)]
        if busy:
            raise DevStackError(
                "These ports are busy: " + ", ".join(busy) + ". Stop what uses them "
                "(another `make dev`?) or choose others with KONNECTZ_API_PORT, KONNECTZ_RUNNER_PORT, "
                "KONNECTZ_PG_PORT, KONNECTZ_NATS_PORT, KONNECTZ_SMTP_PORT."
            )

    def _spawn(self, name: str, args: list[str]) -> None:
        self._args[name] = args
        self._procs = [(n, p) for n, p in self._procs if n != name]
        log = open(self.state_dir / f"{name}.log", "ab")
        out = None if not self.quiet else log
        proc = subprocess.Popen(
            args,
            env=self.component_env(name),
            stdout=out,
            stderr=subprocess.STDOUT if self.quiet else None,
            stdin=subprocess.DEVNULL,
        )
        self._procs.append((name, proc))

    def _wait_http(self, name: str, url: str, timeout: float = 180.0) -> None:
        started = time.monotonic()
        deadline, said = started + timeout, started
        last = ""
        while time.monotonic() < deadline:
            if time.monotonic() - said >= 15:
                said = time.monotonic()
                self._say(f"still waiting for the {name} ({round(said - started)} s; a busy machine is slower)")
            for pname, proc in self._procs:
                if proc.poll() is not None:
                    log = self.state_dir / f"{pname}.log"
                    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
                    raise DevStackError(f"{pname} exited with code {proc.returncode}; see {log}\n{tail}")
            problem = http_problem(url)
            if problem is None:
                return
            last = problem
            time.sleep(0.1)
        raise DevStackError(f"{name} did not become ready at {url} within {timeout:g} s: {last}")

    def ephemeral_note(self) -> str | None:
        """One line when a port is in the kernel's ephemeral range, else None."""
        low, high = _ports.ephemeral_range()
        ports = {**vars(self.ports), **({"ai-host": self.ai_port} if self.ai is not None else {})}
        inside = [f"{name} ({port})" for name, port in ports.items() if low <= port <= high]
        if not inside:
            return None
        return (
            f"note: {', '.join(inside)} {'is' if len(inside) == 1 else 'are'} in the ephemeral range ({low}-{high}), "
            f"which outgoing connections also take; a port below {low} avoids a clash"
        )

    def _say(self, message: str) -> None:
        if not self.quiet:
            print(f"make dev: {message}", file=sys.stderr, flush=True)

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.check_ports()
        note = self.ephemeral_note()
        if note is not None:
            self._say(note)
        try:
            self._say("starting PostgreSQL, NATS and the mail sink")
            self.postgres.start()
            self.nats.start()
            self.smtp.start()
            env = self.component_env()
            self._say("migrating the database (about 10 s on a new one)")
            mig = subprocess.run(
                [sys.executable, "-m", "konnectz_api", "migrate"], env=env, capture_output=True, text=True
            )
            if mig.returncode != 0:
                raise DevStackError(f"database migration failed:\n{mig.stderr[-3000:]}")
            self._spawn(
                "api",
                [sys.executable, "-m", "konnectz_api", "serve", "--host", "127.0.0.1", "--port", str(self.ports.api)],
            )
            self._spawn(
                "runner",
                [
                    sys.executable,
                    "-m",
                    "konnectz_runner",
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.ports.runner),
                ],
            )
            if self.ai is not None:
                self._start_ai_host()
            self._say("starting the api and the runner (about 15 s; the api loads the app catalogue)")
            self._wait_http("api", f"{self.api_url}/healthz")
            self._wait_http("runner", f"{self.runner_url}/healthz")
            if self.ai is not None:
                self._wait_http("ai-host", self._ready_url(), timeout=180)
        except BaseException:
            self.stop()
            raise

    def proc(self, name: str) -> subprocess.Popen[bytes] | None:
        """The process of ``api`` or ``runner`` (for tests that kill one)."""
        return next((p for n, p in self._procs if n == name), None)

    def supervisor(self, **kwargs: Any) -> Supervisor:
        """A :class:`Supervisor` that restarts PostgreSQL, NATS, the api and the runner when they die."""

        def exited(name: str) -> Callable[[], str | None]:
            def alive() -> str | None:
                proc = self.proc(name)
                if proc is None or proc.poll() is None:
                    return None
                return f"exited (code {proc.returncode})"

            return alive

        def respawn(name: str) -> Callable[[], None]:
            return lambda: self._spawn(name, self._args[name])

        def nats_alive() -> str | None:
            proc = self.nats.proc
            return None if proc is not None and proc.poll() is None else "exited"

        def postgres_alive() -> str | None:
            return None if self.postgres.running() else "is not running"

        def restart_nats() -> None:
            self.nats.stop()
            self.nats.start()

        children = [
            Child("PostgreSQL", postgres_alive, self.postgres.start),
            Child("NATS", nats_alive, restart_nats),
            *(Child(name, exited(name), respawn(name)) for name in self._args),
        ]
        return Supervisor(children, **kwargs)

    def stop(self) -> None:
        for _, proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
        for _, proc in reversed(self._procs):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        self.smtp.stop()
        self.nats.stop()
        self.postgres.stop()
