"""``konnectz-runner`` / ``python -m konnectz_runner``.

- ``serve [--host H] [--port P]``: the webhook ingress and run worker (see :mod:`konnectz_runner.ingress.server`).
- ``tick --spec-file F [--no-run] [--max-seconds S]``: for a Kubernetes CronJob of a schedule
  konnect: if a fire of the schedule is due (see :mod:`konnectz_runner.clock.scheduler`), store its
  RunRequest (source ``schedule``) in KZ_RUNS and print its run_id; otherwise print nothing. Then
  (unless ``--no-run``) execute the konnect's waiting runs, this fire's and any delayed run that
  came due since the last tick, with the same durable worker as ``serve`` (consumer
  ``runner-<konnect_id>``), and exit when none is left (or after S seconds; what is left is
  redelivered to the next tick). Exit 0, or 1 if the spec is not a schedule konnect or the run
  could not be stored. A fire is stored once however often it is ticked (a retried Job, a cron
  line finer than the schedule).
- ``cursor --konnect-id N``: print the polling cursor of konnect N (the ids or newest timestamp
  seen, the last poll and its error) as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from nats.js import JetStreamContext

from konnectz_contracts.errors import ConfigError, RunnerError
from konnectz_contracts.events import STREAM_RUNS, RunRequest
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.triggers.schedule import ScheduleTrigger
from konnectz_runner.bus import ensure_streams, load_spec_file
from konnectz_runner.clock import fire_due
from konnectz_runner.config import Settings

__all__ = ["cursor", "main", "tick"]

log = logging.getLogger("konnectz_runner")

# How long a tick may execute runs before it exits (the rest is redelivered to the next tick).
TICK_MAX_SECONDS = 600.0


async def _run_waiting(js: JetStreamContext, spec: FlowSpec, settings: Settings, max_seconds: float) -> None:
    """Execute the konnect's waiting runs with a worker; return once none is pending (or at the limit)."""
    from konnectz_runner.apps import NetGuard, outbound  # import-ok: a subcommand loads only what it runs
    from konnectz_runner.bus import (  # import-ok: a subcommand loads only what it runs
        USER_AGENT,
        KonnectRegistry,
        outbound_transport,
    )
    from konnectz_runner.work import RunWorker, consumer_for  # import-ok: a subcommand loads only what it runs

    registry = KonnectRegistry()
    registry.put(spec)
    guard = NetGuard(settings.allow_private_networks)
    durable, _subject = consumer_for(spec.konnect_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_seconds
    async with outbound.step_client(
        outbound_transport(guard, settings.http_client), timeout=settings.http_timeout_seconds, user_agent=USER_AGENT
    ) as http:
        worker = RunWorker(js, registry, http=http, guard=guard, only_konnect=spec.konnect_id,
                           concurrency=settings.worker_concurrency, replicas=settings.nats_replicas)  # fmt: skip
        await worker.start()
        try:
            while loop.time() < deadline:
                await asyncio.sleep(0.5)
                info = await js.consumer_info(STREAM_RUNS, durable)
                if info.num_pending == 0 and info.num_ack_pending == 0:
                    return
            log.warning("tick: runs of konnect %s still waiting after %.0f s", spec.konnect_id, max_seconds)
        finally:
            await worker.stop()


async def tick(
    spec_file: Path,
    settings: Settings,
    now: datetime | None = None,
    *,
    run: bool = True,
    max_seconds: float = TICK_MAX_SECONDS,
) -> RunRequest | None:
    """Store the run of the fire due now for the schedule konnect in ``spec_file`` (None: nothing due),
    then (``run``) execute the konnect's waiting runs."""
    from konnectz_runner.bus import connect_nats  # import-ok: a subcommand loads only what it runs

    spec = load_spec_file(spec_file, settings.trigger_token)
    if not isinstance(spec.trigger, ScheduleTrigger):
        raise ConfigError(f"konnect {spec.konnect_id} has a {spec.trigger.kind} trigger: only schedules tick")
    nc = await connect_nats(settings)
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings.nats_replicas)
        fired = await fire_due(js, spec, now or datetime.now(UTC))
        if fired is not None:
            print(fired.run_id, flush=True)
        if run:
            await _run_waiting(js, spec, settings, max_seconds)
        return fired
    finally:
        await nc.drain()


async def cursor(konnect_id: int, settings: Settings) -> str:
    """The polling cursor of a konnect as JSON (``{}`` before its first poll)."""
    from konnectz_runner.bus import connect_nats  # import-ok: a subcommand loads only what it runs
    from konnectz_runner.clock import read_cursor  # import-ok: a subcommand loads only what it runs

    nc = await connect_nats(settings)
    try:
        js = nc.jetstream()
        await ensure_streams(js, settings.nats_replicas)
        found, revision = await read_cursor(js, konnect_id)
        return "{}" if revision is None else found.model_dump_json(indent=2)
    finally:
        await nc.drain()


def _cannot_serve() -> str | None:
    """Why ``serve`` cannot start: the app catalogue its flows' app steps read is missing."""
    from konnectz_runner.apps import default_root  # import-ok: a subcommand loads only what it runs

    apps = default_root() / "apps"
    if not apps.is_dir():
        return f"app catalogue: {apps}: no such catalogue directory (set KONNECTZ_CATALOGUE_DIR)"
    return None


def _parser(settings: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="konnectz-runner", description="Konnectz flow runner")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve webhooks and execute runs")
    serve.add_argument("--host", default=settings.runner_host)
    serve.add_argument("--port", type=int, default=settings.runner_port)
    serve.add_argument(
        "--fd", type=int, help="serve on this inherited listening socket (a multi-process runner's child)"
    )
    tick_cmd = commands.add_parser("tick", help="start the schedule's due fire (if any) and exit")
    tick_cmd.add_argument("--spec-file", type=Path, required=True, help="FlowSpec JSON of the konnect")
    tick_cmd.add_argument("--no-run", action="store_true", help="only store the due run; a runner executes it")
    tick_cmd.add_argument("--max-seconds", type=float, default=TICK_MAX_SECONDS, help="limit for executing runs")
    cursor_cmd = commands.add_parser("cursor", help="print a polling konnect's cursor (JSON)")
    cursor_cmd.add_argument("--konnect-id", type=int, required=True)
    return parser


SHUTDOWN_CONNECTIONS_SECONDS = 10


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings()
    args = _parser(settings).parse_args(argv)
    if args.command == "serve":
        import uvicorn

        # A stuck process tells where it is stuck: `kill -USR1 <pid>` prints every thread's stack to stderr
        # (the tests do so before they kill a runner that did not stop in time), and so does a fatal signal.
        faulthandler.enable()
        faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
        # ... and `kill -USR2 <pid>` prints every asyncio task of its loops (which coroutine never ends).
        from konnectz_runner import telemetry  # import-ok: only the serving process watches its loops

        signal.signal(signal.SIGUSR2, lambda _signum, _frame: telemetry.dump_tasks())

        problem = _cannot_serve()
        if problem is not None:
            print(f"konnectz-runner: cannot start: {problem}", file=sys.stderr)
            return 1

        from konnectz_runner.ingress import create_app  # import-ok: a subcommand loads only what it runs

        if args.fd is None and settings.runner_processes > 1:
            from konnectz_runner.processes import serve_processes  # import-ok: a subcommand loads only what it runs

            return serve_processes(args.host, args.port, settings.runner_processes)

        # uvicorn turns SIGTERM/SIGINT into a lifespan shutdown: the worker stops, NATS drains.
        # No access log: one log line per webhook costs more than storing the run (see docs/performance.md).
        logging.getLogger("httpx").setLevel(logging.WARNING)
        logging.getLogger("httpx2").setLevel(logging.WARNING)  # the MCP client's: a line per request, its URL
        config = uvicorn.Config(
            create_app(settings),
            host=args.host,
            port=args.port,
            lifespan="on",
            log_level="info",
            access_log=settings.access_log,
            # Open connections (a webhook whose body is still arriving) get this long after SIGTERM; then the
            # lifespan stops the worker, which gives its runs their own grace (worker.stop).
            timeout_graceful_shutdown=SHUTDOWN_CONNECTIONS_SECONDS,
        )
        server = uvicorn.Server(config)
        if args.fd is None:
            server.run()
        else:
            # socket.socket(fileno=...) reads the family back (TCP, so replies go out without Nagle's delay;
            # uvicorn's own fd= option takes every descriptor for a UNIX socket).
            server.run(sockets=[socket.socket(fileno=args.fd)])
        return 0
    if args.command == "cursor":
        try:
            print(asyncio.run(cursor(args.konnect_id, settings)))
        except Exception as exc:
            print(f"konnectz-runner cursor: {exc or type(exc).__name__}", file=sys.stderr)
            return 1
        return 0
    try:
        asyncio.run(tick(args.spec_file, settings, run=not args.no_run, max_seconds=args.max_seconds))
    except RunnerError as exc:
        print(f"konnectz-runner tick: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"konnectz-runner tick: the run could not be stored: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    return 0
