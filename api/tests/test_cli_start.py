"""`python -m konnectz_api serve` that cannot start exits at once, non-zero, with one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def test_serve_without_a_catalogue_exits_at_once(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KONNECTZ_CATALOGUE_DIR": str(tmp_path / "missing"),
        # Unreachable on purpose: the api must not get as far as retrying its database or NATS.
        "KONNECTZ_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:9/none",
        "KONNECTZ_NATS_URL": "nats://127.0.0.1:9",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "konnectz_api", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"konnectz-api: cannot start: app catalogue: {tmp_path / 'missing' / 'apps'}: no such catalogue directory"
    ]
    assert elapsed < 30


def test_serve_with_invalid_settings_names_the_setting() -> None:
    env = {**os.environ, "KONNECTZ_ENV": "production", "KONNECTZ_SECRET_KEY": "short"}
    done = subprocess.run(
        [sys.executable, "-m", "konnectz_api", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("konnectz-api: cannot start: invalid settings ("), lines


def test_serve_with_the_kubernetes_deployer_and_no_cluster_configuration_exits_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.update(
        KONNECTZ_DEPLOYER="kubernetes", KUBECONFIG=str(tmp_path / "none"), KONNECTZ_NATS_URL="nats://127.0.0.1:9"
    )
    done = subprocess.run(
        [sys.executable, "-m", "konnectz_api", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("konnectz-api: cannot start: kubernetes deployer: "), lines
