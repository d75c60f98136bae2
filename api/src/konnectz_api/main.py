"""The FastAPI application: routes, the task-event consumer, and the built SPA."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse
from starlette.requests import Request
from starlette.staticfiles import StaticFiles

from konnectz_api.bus import Bus
from konnectz_api.catalogue import get_index
from konnectz_api.core import loopguard
from konnectz_api.core.config import Settings, get_settings
from konnectz_api.db import get_sessionmaker, make_read_pool
from konnectz_api.errors import install_error_handlers
from konnectz_api.fastreads import FastReads
from konnectz_api.limits import BodyLimitMiddleware, JsonLimitMiddleware
from konnectz_api.pressure import AccountWritesMiddleware, DeadlineMiddleware
from konnectz_api.responses import document_errors, install_error_schema
from konnectz_api.routes import (
    agent_memory,
    app_accounts,
    approvals,
    apps,
    auth,
    avatars,
    credentials,
    dashboard,
    evaluations,
    folders,
    konnect_webhooks,
    konnects,
    mcp,
    members,
    namespace_bindings,
    password_reset,
    plans,
    profile,
    revisions,
    script_triggers,
    system,
    task_logs,
    widgets,
)
from konnectz_api.services.cluster_sync import ClusterSync
from konnectz_api.services.deployer import Deployer, KubernetesDeployer, LocalDeployer
from konnectz_api.services.failure_alerts import flush_digests_forever
from konnectz_api.services.flow_calls import serve_calls
from konnectz_api.services.quotas import serve_quota
from konnectz_api.services.supervisor import Supervised
from konnectz_api.services.task_events import consume_task_events, purge_payloads_forever
from konnectz_contracts.events import use_pool_subjects
from konnectz_contracts.nats_auth import connect_options
from konnectz_runner import setup_tracing


def _deployer(settings: Settings, bus: Bus) -> Deployer:
    if settings.deployer == "kubernetes":
        if settings.runner_mode == "shared":
            use_pool_subjects()  # runs the api starts (replays) go to the shared runner pool
        return KubernetesDeployer(
            settings.kube_namespace, runner_mode=settings.runner_mode, binding_key=settings.runner_credentials_key
        )
    return LocalDeployer(bus)


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings = get_settings()
    loopguard.watch(asyncio.get_running_loop())  # its synchronous database calls are refused or logged
    anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api_threads
    # Load and validate the app catalogue before anything is opened: an api that cannot serve apps
    # fails here, with nothing left running behind it (the CLI checks it first and exits at once).
    get_index()
    setup_tracing("konnectz-api")
    bus = Bus(
        settings.nats_url,
        connect_options(settings.nats_user, settings.nats_password, settings.nats_ca_file),
        replicas=settings.nats_replicas,
    )
    bus.start()
    app.state.bus = bus
    app.state.deployer = deployer = _deployer(settings, bus)
    app.state.read_pool = read_pool = make_read_pool(settings)
    await read_pool.open()
    # What is loaded by now (modules, the catalogue index: about 190,000 objects) lives as long as the
    # process: keep it out of the cyclic collector's scans. A full collection over it took 110-130 ms
    # on the bench machine, a stall of every request in flight on that worker (the api bench's p99).
    gc.collect()
    gc.freeze()
    stop = asyncio.Event()
    # Supervised: a crash is logged and the task restarted with backoff; /healthz reports it.
    background: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        ("task-event consumer", lambda: consume_task_events(bus, get_sessionmaker(), stop, deployer)),
        ("quota service", lambda: serve_quota(bus, get_sessionmaker(), stop)),
        ("flow call service", lambda: serve_calls(bus, get_sessionmaker(), stop)),
        ("retention purge", lambda: purge_payloads_forever(get_sessionmaker(), settings)),
        ("failure digests", lambda: flush_digests_forever(bus, get_sessionmaker(), settings)),
    ]
    app.state.supervised = supervised = [Supervised(name, run, stopping=stop) for name, run in background]
    for task in supervised:
        task.start()
    # Kubernetes: the Konnects are the published state; follow them (imports, edits, deletions).
    app.state.cluster_sync = sync = (
        ClusterSync(
            deployer,
            get_sessionmaker(),
            watch_seconds=settings.kube_watch_seconds,
            configured_bindings=settings.namespace_bindings,
        )
        if isinstance(deployer, KubernetesDeployer)
        else None
    )
    if sync is not None:
        sync.start()
    try:
        yield
    finally:
        # Bounded: the whole shutdown ends within SHUTDOWN_SECONDS (NATS drain included).
        if sync is not None:
            sync.stop()
        stop.set()
        await asyncio.gather(*(task.stop(within=3.0) for task in supervised))
        await bus.close(within=5.0)
        await read_pool.close(timeout=3.0)


def _mount_spa(app: FastAPI, dist: Path) -> None:
    index = dist / "index.html"
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    def spa(path: str, request: Request) -> FileResponse | JSONResponse:
        if path.startswith(("api/", "dev/")):
            return JSONResponse({"message": f"Not found: /{path}"}, status_code=404)
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            return FileResponse(candidate)
        return FileResponse(index)


def create_app() -> FastAPI:
    settings = get_settings()
    app = FastAPI(
        title="Konnectz API",
        version="0.1.0",
        summary="No-code workflow automation: accounts, konnects, publishing and task logs.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    # Every JSON body: its depth and characters (inside), after its size (outside: bounds what is buffered).
    app.add_middleware(JsonLimitMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_request_bytes)
    # Every reply within the request deadline (503 after it), and one account's writes bounded (429).
    app.add_middleware(DeadlineMiddleware, seconds=settings.request_deadline_seconds)
    app.add_middleware(AccountWritesMiddleware, limit=settings.account_concurrent_writes, secret=settings.secret_key)
    # The pages' hot read routes first: a request is matched against the routes in this order.
    hot = (konnects, folders, dashboard, task_logs)
    # Outermost: the hot GET routes of the pages skip FastAPI's per-request machinery (konnectz_api.fastreads).
    app.add_middleware(FastReads, fastapi_app=app, routers=[module.router for module in hot])
    routers = (
        system,
        auth,
        password_reset,
        profile,
        avatars,
        plans,
        members,
        apps,
        app_accounts,
        credentials,
        namespace_bindings,
        approvals,
        agent_memory,
    )
    every = [m.router for m in (*hot, *routers, konnect_webhooks, script_triggers, widgets, revisions, evaluations)]
    for router in (*every, konnects.activity_router, mcp.router, mcp.tokens_router, approvals.internal_router):
        document_errors(router)  # the 4xx and 503 each route can answer, from one table
        app.include_router(router)
    install_error_schema(app)
    if settings.web_dist and (settings.web_dist / "index.html").exists():
        _mount_spa(app, settings.web_dist)
    return app


app = create_app()
