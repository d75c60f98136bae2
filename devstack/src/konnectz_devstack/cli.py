"""``konnectz-dev``: run the whole platform locally (``make dev``)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._platform import REPO_ROOT, Platform, Ports


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a port number, got {raw!r}") from None


#: ``KONNECTZ_RUNNER_PROCESSES=auto`` (``make dev``'s default): one runner process per core, at most
#: this many (each holds every konnect; konnectz_runner.config.MAX_AUTO_PROCESSES is the same bound).
MAX_AUTO_RUNNER_PROCESSES = 8


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def runner_processes(raw: str | None) -> int:
    """The runner processes ``make dev`` starts: ``KONNECTZ_RUNNER_PROCESSES`` when it is a number,
    one per core (at most :data:`MAX_AUTO_RUNNER_PROCESSES`) when it is unset, empty or ``auto``."""
    value = (raw or "auto").strip().lower()
    if value == "auto":
        return max(1, min(_cores(), MAX_AUTO_RUNNER_PROCESSES))
    try:
        count = int(value)
    except ValueError:
        raise SystemExit(f"KONNECTZ_RUNNER_PROCESSES must be a number or 'auto', got {raw!r}") from None
    if not 1 <= count <= 64:
        raise SystemExit(f"KONNECTZ_RUNNER_PROCESSES must be between 1 and 64, got {count}")
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="konnectz-dev", description=__doc__)
    parser.add_argument("--state-dir", default=os.environ.get("KONNECTZ_STATE_DIR", str(REPO_ROOT / ".konnectz")))
    parser.add_argument("--web-dist", default=os.environ.get("KONNECTZ_WEB_DIST", str(REPO_ROOT / "web" / "dist")))
    parser.add_argument(
        "--ai",
        choices=["flowise", "scripted"],
        default=os.environ.get("KONNECTZ_AI") or None,
        help="also start an AI host: flowise for /chatflows, /agentflows and /tools (install it with `make ai-host`), "
        "or scripted, a model server answering from a script for the Ask AI step without a key (docs/ai.md)",
    )
    args = parser.parse_args(argv)
    ports = Ports(
        api=_int_env("KONNECTZ_API_PORT", 8080),
        runner=_int_env("KONNECTZ_RUNNER_PORT", 8081),
        postgres=_int_env("KONNECTZ_PG_PORT", 15432),
        nats=_int_env("KONNECTZ_NATS_PORT", 14222),
        smtp=_int_env("KONNECTZ_SMTP_PORT", 1025),
    )
    processes = runner_processes(os.environ.get("KONNECTZ_RUNNER_PROCESSES"))
    platform = Platform(
        state_dir=Path(args.state_dir),
        ports=ports,
        extra_env={"KONNECTZ_RUNNER_PROCESSES": str(processes)},
        web_dist=Path(args.web_dist),
        ai=args.ai,
        ai_port=_int_env("KONNECTZ_AI_PORT", 3000),
    )
    stopping = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        platform.start()
    except DevStackError as exc:
        print(f"make dev: {exc}", file=sys.stderr)
        return 1
    print(
        "\nKonnectz is running:\n"
        f"  app and API     {platform.api_url}\n"
        f"  webhooks        {platform.runner_url}/hooks/<token>\n"
        f"  runner          {processes} process{'es' if processes > 1 else ''}"
        " (KONNECTZ_RUNNER_PROCESSES: 'auto' = one per core, at most 8, or a number)\n"
        f"  dev mailbox     {platform.api_url}/dev/mail\n"
        + (
            f"  AI host         http://127.0.0.1:{platform.ai_port} ({platform.ai})\n"
            if platform.ai == "flowise"
            else ""
        )
        + (
            f"  scripted model  {platform.ai_url} (the Base URL of an OpenAI-compatible Model account; docs/ai.md)\n"
            if platform.ai == "scripted"
            else ""
        )
        + f"  state           {platform.state_dir}\n"
        + f"  durability      {platform.durability}\n"
        "Press Ctrl-C to stop.",
        flush=True,
    )
    # A child that dies (runner, api, NATS, PostgreSQL) is restarted with backoff, with one line.
    supervisor = platform.supervisor()
    try:
        while not stopping:
            supervisor.check()
            time.sleep(0.3)
    finally:
        platform.stop()
        print("Konnectz stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
