"""``konnectz-runner`` / ``python -m konnectz_runner``.

- ``serve [--host H] [--port P]``: the webhook ingress and run worker (see :mod:`konnectz_runner.server`).
- ``tick --spec-file F``: for a Kubernetes CronJob: store one RunRequest with source ``schedule``
  for that konnect in KZ_RUNS, print its run_id and exit 0 (1 if it could not be stored).
  The trigger output is ``{"scheduled_at": "<UTC time of the tick>"}``. Each tick is a new run,
  so a Job that is retried after its publish succeeded runs the konnect again.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from konnectz_runner.config import Settings
from konnectz_runner.errors import RunnerError
from konnectz_runner.events import RunRequest, ensure_streams, publish_run
from konnectz_runner.registry import load_spec_file

__all__ = ["main", "tick"]

log = logging.getLogger("konnectz_runner")


async def tick(spec_file: Path, settings: Settings) -> RunRequest:
    """Store one scheduled run of the konnect in ``spec_file``; returns it once JetStream acknowledged it."""
    from konnectz_runner.server import connect_nats

    spec = load_spec_file(spec_file)
    now = datetime.now(UTC)
    run = RunRequest(
        run_id=uuid.uuid4().hex,
        konnect_id=spec.konnect_id,
        trigger_output={"scheduled_at": now.isoformat()},
        received_at=now,
        source="schedule",
    )
    nc = await connect_nats(settings.nats_url)
    try:
        js = nc.jetstream()
        await ensure_streams(js)
        await publish_run(js, run)
    finally:
        await nc.drain()
    return run


def _parser(settings: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="konnectz-runner", description="Konnectz flow runner")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve webhooks and execute runs")
    serve.add_argument("--host", default=settings.runner_host)
    serve.add_argument("--port", type=int, default=settings.runner_port)
    tick_cmd = commands.add_parser("tick", help="store one scheduled run and exit")
    tick_cmd.add_argument("--spec-file", type=Path, required=True, help="FlowSpec JSON of the konnect")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    args = _parser(settings).parse_args(argv)
    if args.command == "serve":
        import uvicorn

        from konnectz_runner.server import create_app

        # uvicorn turns SIGTERM/SIGINT into a lifespan shutdown: the worker stops, NATS drains.
        uvicorn.run(create_app(settings), host=args.host, port=args.port, lifespan="on", log_level="info")
        return 0
    try:
        run = asyncio.run(tick(args.spec_file, settings))
    except RunnerError as exc:
        print(f"konnectz-runner tick: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"konnectz-runner tick: the run could not be stored: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    print(run.run_id)
    return 0
