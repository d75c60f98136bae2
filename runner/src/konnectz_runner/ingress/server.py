"""The runner process: webhook ingress plus the run worker, as one Starlette app.

Startup connects to NATS, makes sure the streams exist, loads the konnects (from the
``KZ_KONNECTS`` bucket, watched for changes, or from the mounted spec file), then starts the
worker. Routes:

- ``POST|PUT|GET /hooks/{token}``: store a RunRequest in JetStream and answer 200 only after
  JetStream acknowledged it; 404 for an unknown token, 413/400 for bad bodies, 503 when NATS
  cannot take the run (never a 2xx for something that is not stored). While the editor captures
  the token's requests (:mod:`konnectz_runner.bus.capture`), the request is also stored as the
  capture; a draft's token (not published) is served only then, answering
  ``{"status": "captured"}``.
- ``GET|POST /forms/{token}``: the hosted form of a form-input konnect
  (:mod:`konnectz_contracts.triggers.form`); a good submission is stored like a webhook run.
- ``GET /healthz``: 200 while connected to NATS, else 503.
- ``GET /metrics``: Prometheus metrics (:mod:`konnectz_runner.telemetry`).

Back-pressure: when more than ``max_queued_runs`` accepted runs wait or run (the KZ_RUNS consumer's
pending and unacknowledged messages, refreshed every 0.25 s), or more than ``max_queue_seconds`` of
work at the rate runs currently finish (:mod:`konnectz_runner.ingress.backlog`), triggers are answered 429
with ``Retry-After`` instead of growing the backlog. Runs execute on their own event loop (a thread with
its own NATS connection, ``worker_thread``), so ingress under load does not crowd execution out.

In local mode (no spec file) a :class:`~konnectz_runner.clock.scheduler.LocalScheduler` also starts the
runs of schedule konnects; a :class:`~konnectz_runner.clock.poller.LocalPoller` polls the polling konnects
(in both modes). In the shared pool (``KONNECTZ_POOL``) only the runner elected among the pool's
replicas (:mod:`konnectz_runner.clock.election`, a NATS KV lock with a TTL) runs them, so a schedule fires
once per slot and a source is polled once per interval however many replicas run.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import nats
import nats.aio.client
import nats.errors
from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.errors import BadRequestError
from nats.js.kv import KeyValue
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from konnectz_contracts.capture import KV_CAPTURING, CapturedRequest, CaptureWindow
from konnectz_contracts.errors import ConfigError, StepError
from konnectz_contracts.events import (
    KV_IDEMPOTENCY,
    KV_KONNECTS,
    STREAM_RUNS,
    RunRequest,
    Unstorable,
    encode_run,
    use_pool_subjects,
)
from konnectz_contracts.quota import KV_QUOTA_BLOCKS
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.triggers.form import PAGE_HEADERS, FormTrigger, check_submission, render_done, render_form
from konnectz_contracts.triggers.webhook import WebhookTrigger
from konnectz_runner import telemetry
from konnectz_runner.apps import NetGuard, outbound
from konnectz_runner.bus import (
    USER_AGENT,
    CaptureCache,
    KonnectRegistry,
    capturing,
    connect_nats,
    ensure_streams,
    load_spec_file,
    outbound_transport,
    publish_capture,
    publish_run,
    watch_konnects,
)
from konnectz_runner.clock import Election, LocalPoller, LocalScheduler
from konnectz_runner.config import Settings
from konnectz_runner.ingress import idempotency
from konnectz_runner.ingress.backlog import Backlog
from konnectz_runner.ingress.replies import ReplyWaiter, Waiting, response_of, timed_out
from konnectz_runner.ingress.resume import resume
from konnectz_runner.ingress.signatures import verify_signature
from konnectz_runner.ingress.webhook import WebhookError, read_trigger_output
from konnectz_runner.ingress.webhook_secrets import SecretCache
from konnectz_runner.outage import Outage, nats_callbacks
from konnectz_runner.tasks import stop_task, stop_tasks
from konnectz_runner.work import NatsQuotaGate, QuotaBlocks, RunWorker, WorkerThread, consumer_for

__all__ = ["Runner", "create_app"]

log = logging.getLogger(__name__)


def _request_suffix(nbytes: int) -> str:
    return f"{random.getrandbits(8 * nbytes):0{2 * nbytes}x}"


# nats-py ends every request's reply inbox with secrets.token_hex(2) after a NUID that is already
# unique: an os.urandom call per request (3 % of the runner's CPU under load) for bytes that only tell
# apart replies on this connection, not a secret. A pseudo-random suffix does the same job.
nats.aio.client.token_hex = _request_suffix  # type: ignore[assignment]


# The lock of the pool's single duties (schedules and polls) in the KZ_LEADERS bucket.
POOL_DUTIES = "pool-duties"


class Runner:
    """Everything the runner process holds while it runs."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.registry = KonnectRegistry()
        self.guard = NetGuard(settings.allow_private_networks)
        self.nc: NATS | None = None
        self.js: JetStreamContext | None = None
        self.capture_kv: KeyValue | None = None
        self.http: httpx.AsyncClient | None = None
        self.worker: RunWorker | None = None
        self.scheduler: LocalScheduler | None = None
        self.poller: LocalPoller | None = None
        self.election: Election | None = None
        self._watch_supervisor: asyncio.Task[None] | None = None
        self._rewatch = asyncio.Event()
        self.captures = CaptureCache()
        self._background: list[asyncio.Task[None]] = []
        self.worker_thread: WorkerThread | None = None
        self.queue_depth = 0
        self.backlog = Backlog(
            max_runs=settings.max_queued_runs,
            max_seconds=settings.max_queue_seconds,
            floor=2 * settings.worker_concurrency,
        )
        self.only_konnect: int | None = None
        self.nats_outage = Outage(f"NATS at {settings.nats_url}", log)
        self.webhook_secrets = SecretCache()
        self.quota_blocks = QuotaBlocks()
        self.replies = ReplyWaiter()  # respond: webhooks held for their run's answer

    async def start(self) -> None:
        only_konnect: int | None = None
        if self.settings.pool:
            if self.settings.spec_file is not None:
                raise ConfigError("KONNECTZ_POOL and KONNECTZ_SPEC_FILE exclude each other")
            use_pool_subjects()
        if self.settings.spec_file is not None:
            spec = load_spec_file(self.settings.spec_file, self.settings.trigger_token)
            self.registry.put(spec)
            only_konnect = spec.konnect_id
        self.nc = await connect_nats(
            self.settings, **nats_callbacks(self.nats_outage, on_reconnected=self._on_reconnected)
        )
        self.js = self.nc.jetstream()
        await ensure_streams(self.js, self.settings.nats_replicas)
        await self.replies.start(self.nc)
        if only_konnect is None:
            ready = asyncio.Event()
            self._watch_supervisor = asyncio.create_task(self._watch_forever(ready), name="konnectz-kv-watch")
            try:
                await asyncio.wait_for(ready.wait(), self.settings.kv_ready_timeout_seconds)
            except TimeoutError as exc:
                raise ConfigError(f"Could not load konnects from the {KV_KONNECTS} bucket") from exc
        self.http = outbound.step_client(
            outbound_transport(self.guard, self.settings.http_client),
            timeout=self.settings.http_timeout_seconds,
            user_agent=USER_AGENT,
        )
        self.only_konnect = only_konnect
        if self.settings.worker_thread:
            sys.setswitchinterval(self.settings.switch_interval_seconds)
            self.worker_thread = WorkerThread(self.settings, self.registry, self.guard, only_konnect)
            await self.worker_thread.start()
        else:
            self.worker = RunWorker(
                self.js,
                self.registry,
                http=self.http,
                guard=self.guard,
                only_konnect=only_konnect,
                concurrency=self.settings.worker_concurrency,
                in_doubt=self.settings.in_doubt_steps,
                replicas=self.settings.nats_replicas,
                quota=NatsQuotaGate(self.nc, timeout=self.settings.quota_timeout_seconds)
                if self.settings.enforce_quota
                else None,
            )
            await self.worker.start()
        self._background = [
            asyncio.create_task(self._follow_captures(), name="konnectz-captures"),
            asyncio.create_task(self._follow_quota_blocks(), name="konnectz-quota-blocks"),
            asyncio.create_task(self._watch_queue(), name="konnectz-queue-depth"),
        ]
        # Schedules and polls are the first process's duty in a multi-process runner (the others serve
        # webhooks and execute runs); in the shared pool, only of the runner elected among its replicas.
        if self.settings.runner_primary:
            if self.settings.pool:
                self.election = Election(
                    self.js,
                    POOL_DUTIES,
                    on_elected=self._start_duties,
                    on_deposed=self._stop_duties,
                    replicas=self.settings.nats_replicas,
                )
                self.election.start()
            else:
                await self._start_duties()
        # Everything loaded so far (the konnects, the modules) lives as long as the process: keep it out
        # of the cyclic garbage collector's scans, and collect the young generation less often. With
        # 100,000 konnects a full collection otherwise stalls requests for tens of milliseconds.
        gc.collect()
        gc.freeze()
        gc.set_threshold(10_000, 20, 20)
        log.info("Runner ready: %d konnect(s)", len(self.registry))

    async def _start_duties(self) -> None:
        """Start firing schedules and polling sources (local mode: schedules; a konnect's own Deployment:
        its polls; the pool: both, on the elected runner)."""
        assert self.js is not None and self.http is not None
        if self.only_konnect is None:  # on Kubernetes a dedicated schedule konnect is ticked by its CronJob
            self.scheduler = LocalScheduler(self.js, self.registry)
            self.scheduler.start()
        self.poller = LocalPoller(
            self.js,
            self.registry,
            http=self.http,
            guard=self.guard,
            max_interval_seconds=self.settings.max_poll_interval_seconds,
        )
        self.poller.start()

    async def _stop_duties(self) -> None:
        scheduler, poller, self.scheduler, self.poller = self.scheduler, self.poller, None, None
        if scheduler is not None:
            await scheduler.stop()
        if poller is not None:
            await poller.stop()

    async def stop(self) -> None:
        if self.election is not None:
            await self.election.stop()  # ends the duties and frees the lock for another pool runner
        await self._stop_duties()
        await stop_tasks(self._background)
        if self.worker is not None:
            await self.worker.stop()
        if self.worker_thread is not None:
            await self.worker_thread.stop()
        await stop_task(self._watch_supervisor)
        if self.http is not None:
            await self.http.aclose()
        if self.nc is not None and not self.nc.is_closed:
            self.nats_outage.closing = True
            try:
                self.nc.options["drain_timeout"] = 9  # its own timeout, not a cancelled drain (see the api's Bus.close)
                await asyncio.wait_for(self.nc.drain(), 10)
            except Exception:
                log.debug("NATS drain failed; closing", exc_info=True)
                await self.nc.close()

    async def _on_reconnected(self) -> None:
        self._rewatch.set()  # the server may have lost the watcher's consumer: load everything again

    async def _watch_forever(self, first_ready: asyncio.Event) -> None:
        assert self.js is not None
        ready = first_ready
        while True:
            self._rewatch.clear()
            try:
                kv = await self.js.key_value(KV_KONNECTS)
                watch = asyncio.create_task(watch_konnects(kv, self.registry, ready))
                rewatch = asyncio.create_task(self._rewatch.wait())
                try:
                    await asyncio.wait({watch, rewatch}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for task in (watch, rewatch):
                        task.cancel()
                    await asyncio.gather(watch, rewatch, return_exceptions=True)
                if watch.done() and not watch.cancelled() and watch.exception() is not None:
                    raise watch.exception()  # type: ignore[misc]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("Watching %s failed (%s); watching again", KV_KONNECTS, exc or type(exc).__name__)
                await asyncio.sleep(1.0)
            ready = asyncio.Event()

    async def _follow_captures(self) -> None:
        assert self.js is not None
        while True:
            try:
                await self.captures.follow(await self.js.key_value(KV_CAPTURING))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("Following %s failed (%s); again", KV_CAPTURING, exc or type(exc).__name__)
            await asyncio.sleep(1.0)

    async def _follow_quota_blocks(self) -> None:
        assert self.js is not None
        while True:
            try:
                await self.quota_blocks.follow(await self.js.key_value(KV_QUOTA_BLOCKS))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("Following %s failed (%s); again", KV_QUOTA_BLOCKS, exc or type(exc).__name__)
            await asyncio.sleep(1.0)

    async def _watch_queue(self) -> None:
        """Keep ``queue_depth`` (accepted runs not finished) fresh for back-pressure and the metric."""
        assert self.js is not None
        durable, _subject = consumer_for(self.only_konnect)
        while True:
            try:
                info = await self.js.consumer_info(STREAM_RUNS, durable)
                self.queue_depth = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
                delivered = int(info.delivered.consumer_seq or 0) if info.delivered is not None else 0
                self.backlog.observe(
                    asyncio.get_running_loop().time(),
                    depth=self.queue_depth,
                    delivered=delivered,
                    ack_pending=int(info.num_ack_pending or 0),
                )
                telemetry.RUN_QUEUE_DEPTH.set(self.queue_depth)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.debug("Reading the run queue depth failed: %s", exc or type(exc).__name__)
            await asyncio.sleep(0.25)

    def overloaded(self) -> bool:
        return self.backlog.full()

    def nats_problem(self) -> str | None:
        """Why runs cannot be stored right now, or None when they can."""
        if self.nc is None or self.js is None:
            return "not connected to NATS yet"
        if not self.nc.is_connected:
            return "not connected to NATS (reconnecting)"
        return None

    async def accept(self, run: RunRequest) -> None:
        """Store the run in JetStream; raises :class:`Unavailable` if it was not acknowledged (a
        transient condition), :class:`~konnectz_contracts.events.Unstorable` if it never can be."""
        problem = self.nats_problem()
        if problem is not None:
            raise Unavailable(problem)
        assert self.js is not None
        try:
            await publish_run(self.js, run)
        except Unstorable:
            raise
        except nats.errors.MaxPayloadError as exc:  # an external NATS with a smaller max_payload
            limit = self.nc.max_payload if self.nc is not None else "?"
            message = f"The request is larger than the NATS server accepts (max_payload {limit} bytes)"
            raise Unstorable(413, message) from exc
        except BadRequestError as exc:
            if exc.err_code == _MESSAGE_TOO_LARGE:
                raise Unstorable(413, f"The request is larger than the run queue accepts: {exc.description}") from exc
            raise Unavailable(f"NATS did not store the run: {exc}") from exc
        except Exception as exc:
            raise Unavailable(f"NATS did not store the run: {exc or type(exc).__name__}") from exc


class Unavailable(Exception):
    """The run could not be stored now (transient); the caller must not be told it was accepted."""


_MESSAGE_TOO_LARGE = 10054  # JetStream: message size exceeds the stream's max_msg_size


def _unavailable(message: str, runner: Runner) -> JSONResponse:
    """A 503 for a transient condition: the sender may retry after ``Retry-After`` seconds."""
    return JSONResponse(
        {"message": message}, status_code=503, headers={"Retry-After": str(runner.settings.retry_after_seconds)}
    )


def _over_quota(reason: str) -> JSONResponse:
    """402: the owner has no task left; nothing is stored (konnectz_runner.work.quota)."""
    return JSONResponse({"message": f"The run was refused, nothing was stored: {reason}"}, status_code=402)


def _refused(exc: WebhookError | Unstorable, runner: Runner) -> JSONResponse:
    if exc.status == 503:
        return _unavailable(exc.message, runner)
    return JSONResponse({"message": exc.message}, status_code=exc.status)


def _runner(request: Request) -> Runner:
    runner: Runner = request.app.state.runner
    return runner


async def _capture_window(runner: Runner, token: str) -> CaptureWindow | None:
    if runner.captures.ready:
        return runner.captures.get(token)
    if runner.js is None or runner.nats_problem() is not None:
        return None
    try:
        if runner.capture_kv is None:
            runner.capture_kv = await runner.js.key_value(KV_CAPTURING)
        return await capturing(runner.js, token, runner.capture_kv)
    except Exception as exc:  # the capture is a convenience of the editor: never fail a run for it
        log.warning("Could not look up the capture window: %s", exc or type(exc).__name__)
        return None


async def _store_capture(runner: Runner, window: CaptureWindow, trigger_output: dict[str, Any]) -> bool:
    captured = CapturedRequest(
        konnect_id=window.konnect_id, received_at=datetime.now(UTC), trigger_output=trigger_output
    )
    try:
        assert runner.js is not None
        await publish_capture(runner.js, captured)
    except Exception as exc:
        log.error("Capture for konnect %s not stored: %s", window.konnect_id, exc or type(exc).__name__)
        return False
    return True


async def _capture_draft(request: Request, runner: Runner, token: str) -> JSONResponse:
    """A token that is not published: served only while the editor captures it."""
    window = await _capture_window(runner, token)
    if window is None:
        return JSONResponse({"message": "Unknown webhook"}, status_code=404)
    if request.method == "HEAD":
        return JSONResponse({"status": "ok"})
    try:
        trigger_output = await read_trigger_output(request, runner.settings.max_body_bytes)
        _check_capture(window, trigger_output)
    except (WebhookError, Unstorable) as exc:
        return _refused(exc, runner)
    if not await _store_capture(runner, window, trigger_output):
        return _unavailable("The request could not be captured, try again", runner)
    return JSONResponse({"status": "captured"})


def _check_capture(window: CaptureWindow, trigger_output: dict[str, Any]) -> None:
    """Raise :class:`Unstorable` for a captured request that could never be stored."""
    now = datetime.now(UTC)
    run = RunRequest(run_id="capture", konnect_id=window.konnect_id, trigger_output=trigger_output, received_at=now)
    encode_run(run)


async def hook(request: Request) -> Response:
    """A webhook: refused at the door (quota, overload), read (and its signature checked), stored as a
    run in KZ_RUNS, then answered 200 with the run's id (and captured if the editor asks); or, when its
    trigger answers from the run (``respond``), held until the run's answer or the trigger's timeout."""
    runner = _runner(request)
    token = request.path_params["token"]
    spec = runner.registry.by_token(token)
    if spec is None or spec.trigger.kind != "webhook":
        return await _capture_draft(request, runner, token)
    if request.method == "HEAD":  # link checkers and previews probe URLs: never a run
        return JSONResponse({"status": "ok"})
    refused = await _refused_at_the_door(runner, spec)
    if refused is not None:
        return refused
    # Whether the editor captures this token is looked up while the run is being stored.
    lookup = None if runner.captures.ready else asyncio.create_task(_capture_window(runner, token))
    try:
        trigger_output = await read_trigger_output(
            request,
            runner.settings.max_body_bytes,
            verify=_signature_check(request, runner, spec.konnect_id, spec.trigger),
        )
    except WebhookError as exc:
        if lookup is not None:
            lookup.cancel()
        return _refused(exc, runner)
    except ClientDisconnect:
        if lookup is not None:
            lookup.cancel()
        raise
    # respond: listened for before the run is stored (its worker may answer at once)
    held = runner.replies.expect() if spec.trigger.respond != "at_once" else None
    try:
        stored = await _store_run(request, runner, spec, trigger_output, held)
    except BaseException:
        if held is not None:
            held.forget()
        raise
    if isinstance(stored, JSONResponse):  # refused, or the reply to a repeated Idempotency-Key
        if lookup is not None:
            lookup.cancel()
        if held is not None:
            held.forget()
        return stored
    telemetry.RUNS_ACCEPTED.labels("webhook").inc()
    window = await lookup if lookup is not None else runner.captures.get(token)
    if window is not None:
        await _store_capture(runner, window, trigger_output)
    if held is not None:
        return await _held(held, stored.run_id, spec.trigger.respond_timeout_seconds)
    return JSONResponse({"status": "accepted", "run_id": stored.run_id})


async def _held(held: Waiting, run_id: str, seconds: float) -> Response:
    """The run's answer to a held webhook, or 202 with the run id after ``seconds``."""
    reply = await held.wait(seconds)
    if reply is None:
        telemetry.WEBHOOK_ANSWERS.labels("timeout").inc()
        return timed_out(run_id, seconds)
    telemetry.WEBHOOK_ANSWERS.labels("waiting" if reply.waiting else "run").inc()
    return response_of(reply, seconds)


async def _refused_at_the_door(runner: Runner, spec: FlowSpec) -> JSONResponse | None:
    """The reply to a webhook refused before its body is read: its owner over quota, or the runner
    overloaded (None: come in)."""
    over_quota = runner.quota_blocks.reason(spec.owner_id)
    if over_quota is not None:
        telemetry.RUNS_REFUSED.labels("quota").inc()
        return _over_quota(over_quota)
    if runner.overloaded():
        telemetry.RUNS_REFUSED.labels("backpressure").inc()
        return await _busy(runner)
    return None


def _signature_check(
    request: Request, runner: Runner, konnect_id: int, trigger: WebhookTrigger
) -> Callable[[bytes], Awaitable[None]] | None:
    """The check of an app webhook's signature over the body (None: the trigger has no signature)."""
    signature = trigger.signature
    if signature is None:
        return None

    async def verify(body: bytes) -> None:
        headers = dict(request.headers)
        try:
            secret = await runner.webhook_secrets.get(konnect_id)
            ok = verify_signature(signature, secret, headers, body, now=time.time())
            if not ok:  # the secret may have changed with a re-publish: read it again once
                secret = await runner.webhook_secrets.get(konnect_id, refresh=True)
                ok = verify_signature(signature, secret, headers, body, now=time.time())
        except StepError as exc:
            log.error("Webhook of konnect %s: %s", konnect_id, exc)
            raise WebhookError(503, "The signature cannot be checked now; try again") from exc
        if not ok:
            telemetry.RUNS_REFUSED.labels("signature").inc()
            raise WebhookError(401, f"Invalid or missing {signature.header} signature")

    return verify


async def _store_run(
    request: Request, runner: Runner, spec: FlowSpec, trigger_output: dict[str, Any], held: Waiting | None = None
) -> RunRequest | JSONResponse:
    """The webhook's run, stored in KZ_RUNS (once per Idempotency-Key), or the reply that refuses it
    (or repeats the first run's)."""
    with telemetry.span("webhook", {"konnectz.konnect_id": spec.konnect_id}) as span:
        run = RunRequest(
            run_id=uuid.uuid4().hex,
            konnect_id=spec.konnect_id,
            trigger_output=trigger_output,
            received_at=datetime.now(UTC),
            source="webhook",
            traceparent=telemetry.carrier_of(span) if span is not None else None,
            respond_to=held.subject if held is not None else None,
        )
        if span is not None:
            span.set_attribute("konnectz.run_id", run.run_id)
        key = request.headers.get(idempotency.HEADER)
        try:
            if key is not None:
                reply = await _accept_once(runner, run, key)
                if reply is not None:
                    return reply
            else:
                await runner.accept(run)
        except Unstorable as exc:
            telemetry.RUNS_REFUSED.labels("unstorable").inc()
            return _refused(exc, runner)
        except Unavailable as exc:
            telemetry.RUNS_REFUSED.labels("nats").inc()
            log.error("Webhook for konnect %s refused: %s", spec.konnect_id, exc)
            return _unavailable(f"The run could not be stored, try again: {exc}", runner)
    return run


async def _busy(runner: Runner) -> JSONResponse:
    """The 429 of an overloaded runner, after ``refuse_delay_seconds`` (see :class:`ShedLoad`)."""
    await asyncio.sleep(runner.settings.refuse_delay_seconds)
    return JSONResponse(
        {"message": "Too many runs are waiting; retry later"},
        status_code=429,
        headers={"Retry-After": str(runner.settings.retry_after_seconds)},
    )


async def _accept_once(runner: Runner, run: RunRequest, key: str) -> JSONResponse | None:
    """Store ``run`` unless ``key`` already started one (:mod:`konnectz_runner.ingress.idempotency`).

    Returns the reply for a refused key or a repeated call; None when ``run`` (whose run_id may
    become the key's first one) was stored. Raises :class:`Unavailable` like :meth:`Runner.accept`.
    """
    problem = idempotency.check_key(key)
    if problem is not None:
        return JSONResponse({"message": problem}, status_code=400)
    if runner.js is None or runner.nats_problem() is not None:
        raise Unavailable(runner.nats_problem() or "not connected to NATS")
    try:
        kv = await runner.js.key_value(KV_IDEMPOTENCY)
        claimed = await idempotency.claim(kv, konnect_id=run.konnect_id, key=key, run_id=run.run_id)
    except Exception as exc:
        raise Unavailable(f"the Idempotency-Key could not be checked: {exc or type(exc).__name__}") from exc
    if claimed.stored:
        body = {"status": "accepted", "run_id": claimed.run_id}
        return JSONResponse(body, headers={"Idempotent-Replayed": "true"})
    run.run_id = claimed.run_id  # a retry of a call not known stored: same run id, stored once
    await runner.accept(run)
    await idempotency.stored(kv, konnect_id=run.konnect_id, key=key, claimed=claimed)
    if not claimed.first:
        return JSONResponse({"status": "accepted", "run_id": run.run_id}, headers={"Idempotent-Replayed": "true"})
    return None


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media_type == "application/json" or ("application/json" in accept and "text/html" not in accept)


async def form(request: Request) -> Response:
    """The hosted form of a form-input konnect: GET shows it, POST stores a submission as a run."""
    runner = _runner(request)
    spec = runner.registry.by_token(request.path_params["token"])
    if spec is None or not isinstance(spec.trigger, FormTrigger):
        return JSONResponse({"message": "Unknown form"}, status_code=404)
    trigger = spec.trigger
    if request.method in ("GET", "HEAD"):
        return HTMLResponse(render_form(trigger), headers=PAGE_HEADERS)
    as_json = _wants_json(request)
    try:
        data = await read_trigger_output(request, runner.settings.max_form_bytes)
    except WebhookError as exc:
        if as_json:
            return JSONResponse({"message": exc.message}, status_code=exc.status)
        return HTMLResponse(render_form(trigger, errors={}), status_code=exc.status, headers=PAGE_HEADERS)
    values, errors = check_submission(trigger, data)
    if errors:
        if as_json:
            return JSONResponse({"message": "Please correct the fields", "errors": errors}, status_code=400)
        page = render_form(trigger, values=data, errors=errors)
        return HTMLResponse(page, status_code=400, headers=PAGE_HEADERS)
    run = RunRequest(
        run_id=uuid.uuid4().hex,
        konnect_id=spec.konnect_id,
        trigger_output=values,
        received_at=datetime.now(UTC),
        source="form",
    )
    over_quota = runner.quota_blocks.reason(spec.owner_id)
    if over_quota is not None:
        telemetry.RUNS_REFUSED.labels("quota").inc()
        if as_json:
            return _over_quota(over_quota)
        return HTMLResponse(render_form(trigger, values=data), status_code=402, headers=PAGE_HEADERS)
    if runner.overloaded():
        telemetry.RUNS_REFUSED.labels("backpressure").inc()
        return await _busy(runner)
    try:
        await runner.accept(run)
        telemetry.RUNS_ACCEPTED.labels("form").inc()
    except Unstorable as exc:
        if as_json:
            return _refused(exc, runner)
        return HTMLResponse(render_form(trigger, values=data, errors={}), status_code=exc.status, headers=PAGE_HEADERS)
    except Unavailable as exc:
        log.error("Form submission for konnect %s refused: %s", spec.konnect_id, exc)
        message = "Your response could not be stored, please try again in a moment."
        retry = {"Retry-After": str(runner.settings.retry_after_seconds)}
        if as_json:
            return _unavailable(message, runner)
        return HTMLResponse(render_form(trigger, values=data), status_code=503, headers={**PAGE_HEADERS, **retry})
    if as_json:
        return JSONResponse({"status": "accepted", "run_id": run.run_id})
    return HTMLResponse(render_done(trigger), headers=PAGE_HEADERS)


async def metrics(request: Request) -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


async def healthz(request: Request) -> JSONResponse:
    problem = _runner(request).nats_problem()
    if problem is not None:
        return JSONResponse({"status": "unavailable", "reason": problem}, status_code=503)
    return JSONResponse({"status": "ok"})


_HOOK_METHODS = frozenset({"GET", "HEAD", "POST", "PUT"})


class ShedLoad:
    """Serves ``/hooks/{token}`` straight from the ASGI call, without Starlette's router and exception
    layers: webhooks are nearly all the runner's traffic, and under load those layers were about a
    tenth of its CPU. The handler is the route's own (:func:`hook`, overload refusals included);
    anything else goes on to the app. Errors still reach Starlette's outermost error middleware."""

    def __init__(self, app: Any, runner: Runner) -> None:
        self.app = app
        self.runner = runner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in _HOOK_METHODS:
            path: str = scope["path"]
            token = path[len("/hooks/") :] if path.startswith("/hooks/") else ""
            if token and "/" not in token:
                scope["path_params"] = {"token": token}
                response: Response
                try:
                    response = await hook(Request(scope, receive))
                except ClientDisconnect:
                    response = self._client_gone(scope["method"], token)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _client_gone(self, method: str, token: str) -> Response:
        """What :func:`_client_gone` does for the app's routes (which this bypasses), naming the konnect
        rather than the token: the token is the webhook's secret."""
        spec = self.runner.registry.by_token(token)
        whose = f"konnect {spec.konnect_id}" if spec is not None else "a token that is not published"
        log.warning("%s webhook of %s: the client disconnected before its request body was read", method, whose)
        return Response(status_code=400)


async def _client_gone(request: Request, exc: Exception) -> Response:
    """A sender that disconnected before its body arrived: nothing was accepted, nobody reads the reply.
    One log line instead of a traceback."""
    log.warning("%s %s: the client disconnected before its request body was read", request.method, request.url.path)
    return Response(status_code=400)


def create_app(settings: Settings | None = None) -> Starlette:
    telemetry.setup_tracing("konnectz-runner")
    runner = Runner(settings or Settings())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        telemetry.watch_loop("ingress", asyncio.get_running_loop())
        await runner.start()
        try:
            yield
        finally:
            await runner.stop()

    app = Starlette(
        routes=[
            Route("/hooks/{token}", hook, methods=["GET", "POST", "PUT"]),
            Route("/forms/{token}", form, methods=["GET", "POST"]),
            Route("/resume/{token}", resume, methods=["GET", "POST", "PUT"]),  # waits for a call (docs/waits.md)
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
        middleware=[Middleware(ShedLoad, runner=runner)],
        exception_handlers={ClientDisconnect: _client_gone},
    )
    app.state.runner = runner
    return app
