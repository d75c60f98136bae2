"""The run worker: a durable JetStream pull consumer on KZ_RUNS that executes runs.

For each RunRequest: execute the konnect's flow, publish its TaskEvent on KZ_EVENTS (awaiting
the JetStream ack, ``Nats-Msg-Id = run_id``), and only then ack the run. A crash before the
ack means redelivery; the event publish is deduplicated by JetStream within its window and by
the api on ``run_id``, so one run leaves one task log. Each finished step with effects is kept
in the step journal (:mod:`konnectz_runner.engine.journal`), so a redelivery resumes after the last
finished step instead of repeating it.

Leases: the consumer's ack wait is short (:data:`ACK_WAIT_SECONDS`) and a running run's message
is kept alive with ``in_progress`` every third of it, so a run held by a dead runner is
delivered again within seconds, while a slow run stays with its worker. The consumer redelivers
without limit; the worker counts deliveries (``num_delivered``, reported as the task log's
``attempts``) and ends a run as an ERROR TaskEvent on delivery :data:`MAX_ATTEMPTS` if it still
cannot run, so nothing accepted disappears silently.

A run for a konnect this runner has not loaded (it was published a moment ago, or is being
reloaded after a NATS restart) is not dropped: it is handed back (``nak`` with a growing
delay) and ends as an ERROR task log saying why on its last attempt.

Bounds: the consumer's ``max_deliver`` is :data:`CONSUMER_MAX_DELIVER` (twice :data:`MAX_ATTEMPTS`:
from attempt :data:`MAX_ATTEMPTS` on, a delivery only tries to store the run's ERROR event). A run the
server stops offering even so is announced by its max-deliveries advisory: the worker then stores its
ERROR event itself and deletes it (:meth:`RunWorker._gave_up`). A task event larger than KZ_EVENTS
accepts is trimmed (:func:`konnectz_contracts.events.fit_event`), so a large request can never make its
run fail for ever. Once a run is acknowledged (its TaskEvent stored, or its delay's timer stored) the
worker's sweep deletes its message from KZ_RUNS: the accepted request is kept in NATS only until it has
run. The sweep is one purge of the consumer's subjects below its ack floor (every run up to it is
acknowledged) once a second while runs finish, not one delete per run (:meth:`RunWorker._sweep`).

A run that reaches a delay is suspended: its continuation is stored as a durable JetStream timer
(:mod:`konnectz_runner.bus.timers`) and only then the run message is acked. The timer comes back as a
RunRequest with ``resume`` set and the same ``run_id``; that delivery runs the remaining steps and
publishes the run's one TaskEvent.

Concurrency limit (``spec.run_control.max_concurrency``, :mod:`konnectz_runner.work.slots`): before it
executes, a run takes one of its konnect's slots in ``KZ_SLOTS``; if none is free it shows as QUEUED
in ``KZ_ACTIVE`` and waits, in arrival order, its message kept alive (``in_progress``). A waiting run
does not count against the worker's ``concurrency`` (up to :data:`MAX_WAITING` of them), so runs of
other konnects go on. The slot is released once the run's TaskEvent is stored, and also when the run
suspends in a delay (it queues again for a slot when its timer fires).

Run control (:mod:`konnectz_runner.bus.active`): a run being executed (for more than
``LISTED_AFTER_SECONDS``, or of a flow with a concurrency limit) has a RUNNING entry in
``KZ_ACTIVE`` (with the step it is in), a run suspended in a delay a WAITING one (with its
``resume_at``); the entry is deleted once the run's TaskEvent is stored. Before each step the engine
checks ``KZ_CANCELS``: a cancelled run ends as CANCELLED.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import threading
from datetime import UTC, datetime
from typing import Any

import httpx
import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy
from nats.js.errors import BadRequestError
from nats.js.kv import KeyValue
from opentelemetry import context as otel_context
from opentelemetry import trace
from pydantic import ValidationError

from konnectz_contracts.events import (
    POOL_RUNS_PREFIX,
    STREAM_RUNS,
    SUBJECTS_RUNS,
    RunRequest,
    StepResult,
    TaskEvent,
    Unstorable,
    fit_event,
    pool_subjects,
    run_subject,
)
from konnectz_contracts.quota import KV_QUOTA_BLOCKS
from konnectz_contracts.run_control import LISTED_AFTER_SECONDS, ActiveRun
from konnectz_contracts.spec import FlowSpec
from konnectz_contracts.waits import WAITING_FOR
from konnectz_runner import telemetry
from konnectz_runner.apps import Budgets, NetGuard, outbound
from konnectz_runner.bus import (
    USER_AGENT,
    ActiveWatch,
    CancelBook,
    KonnectRegistry,
    clear_active,
    connect_nats,
    load_revision,
    outbound_transport,
    publish_event,
    remember_revision,
    run_state_buckets,
    schedule_continuation,
    store_waiting,
    wait_buckets,
    wait_on_delivery,
)
from konnectz_runner.engine import (
    FLOW_CALLS,
    RESPONDER,
    InDoubt,
    JournalEntry,
    StepBusy,
    StepJournal,
    Suspended,
    execute,
    step_key,
    suspension_failed,
)
from konnectz_runner.outage import Outage, nats_callbacks
from konnectz_runner.tasks import stop_task
from konnectz_runner.work.failed_runs import runner_error_event
from konnectz_runner.work.quota import NatsQuotaGate, QuotaGate, QuotaUnavailable, block_owner, exhausted, refused_event
from konnectz_runner.work.replies import answer_end, answer_waiting, run_replies
from konnectz_runner.work.slots import QueueFull, Slots, StoppedWaiting, put_queued, slots_bucket
from konnectz_runner.work.subflows import FlowCalls, report_end

__all__ = [
    "ACK_WAIT_SECONDS",
    "CONSUMER_MAX_DELIVER",
    "MAX_ATTEMPTS",
    "MAX_DELIVER",
    "RunWorker",
    "WorkerThread",
    "consumer_for",
    "quota_retry_delay",
    "unloaded_delay",
]

log = logging.getLogger(__name__)

DURABLE = "runner"
ACK_WAIT_SECONDS = 10.0
# Deliveries of one run before it ends as an ERROR task log (the consumer itself never gives up,
# so a run cannot be left unacknowledged and forgotten).
MAX_ATTEMPTS = 10
MAX_DELIVER = MAX_ATTEMPTS  # the former name
#: A run whose task quota could not be checked (no api answered) is offered again after 5 s, then
#: twice as long each time up to 60 s: about 6 minutes over its deliveries, so an api or PostgreSQL
#: restart does not refuse the runs that arrived meanwhile (5 s each time refused them after about a
#: minute, seen on the real node while a PostgreSQL pod came back under load).
QUOTA_RETRY_FIRST_SECONDS = 5.0
QUOTA_RETRY_MAX_SECONDS = 60.0


def quota_retry_delay(delivered: int) -> float:
    """Seconds before a run whose quota could not be checked is offered again (its delivery ``delivered``)."""
    return min(QUOTA_RETRY_FIRST_SECONDS * 2 ** max(delivered - 1, 0), QUOTA_RETRY_MAX_SECONDS)


#: The consumer's max_deliver: deliveries past MAX_ATTEMPTS only store the run's ERROR event.
CONSUMER_MAX_DELIVER = 2 * MAX_ATTEMPTS
PUBLISH_TIMEOUT_SECONDS = 10.0
_MESSAGE_TOO_LARGE = 10054  # JetStream: message size exceeds the stream's max_msg_size
MAX_DELIVERIES_ADVISORY = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
#: What a task event is trimmed to when NATS refuses it as too large.
FALLBACK_EVENT_BYTES = 64 * 1024
#: Runs waiting for a konnect slot that a worker holds on top of its ``concurrency``.
MAX_WAITING = 256
#: A run whose konnect's slot queue is full comes back after this.
QUEUE_FULL_DELAY_SECONDS = 30.0
#: Finished runs leave KZ_RUNS within two of these (the sweep purges below the ack floor it read one
#: sweep earlier, so the max-deliveries advisory's handler can still read its run).
SWEEP_SECONDS = 1.0
#: A run this worker acknowledged that is still above the ack floor this long after (a run before it is
#: still running, waiting for a slot or handed back) is deleted by itself, as every run once was. Long
#: enough that the floor's short stops (a step of a second or two, a run handed back for a second) cost
#: one purge for all the runs behind them, short enough that finished runs do not pile up behind a long one.
STRAGGLER_SECONDS = 4.0
#: The sweep of a worker that stops waits at most this long.
FINAL_SWEEP_SECONDS = 5.0
#: Acknowledged runs above the floor a worker remembers, and deletes by itself per sweep, at most.
MAX_TRACKED = 100_000
MAX_STRAGGLERS_PER_SWEEP = 1_000


def consumer_for(konnect_id: int | None) -> tuple[str, str]:
    """(durable name, filter subject): the shared consumer, or a dedicated one for one konnect."""
    if konnect_id is None:
        if pool_subjects():  # the shared pool: only the runs of pool konnects
            return f"{DURABLE}-pool", f"{POOL_RUNS_PREFIX}.>"
        return DURABLE, SUBJECTS_RUNS
    return f"{DURABLE}-{int(konnect_id)}", run_subject(konnect_id)


async def _flush(journal: StepJournal | None) -> None:
    """Store the journal's last result if it still keeps one (best effort: a failure leaves the step in
    doubt for a redelivery, as a failed put of its result always did)."""
    if journal is None:
        return
    try:
        await journal.flush()
    except Exception as exc:
        log.warning("Run %s: a step's result could not be stored (%s)", journal.run_id, exc or type(exc).__name__)


class _Back(enum.Enum):
    """A step of :meth:`RunWorker.handle` handed the run back to JetStream (nak'd, or its delay's timer
    stored): nothing more to do with this delivery."""

    HANDED = enum.auto()


_HANDED_BACK = _Back.HANDED


class RunWorker:
    def __init__(
        self,
        js: JetStreamContext,
        registry: KonnectRegistry,
        *,
        http: httpx.AsyncClient,
        guard: NetGuard,
        only_konnect: int | None = None,
        concurrency: int = 16,
        ack_wait: float = ACK_WAIT_SECONDS,
        max_deliver: int = MAX_ATTEMPTS,
        quota: QuotaGate | None = None,
        in_doubt: InDoubt = "fail",
        consumer_max_deliver: int | None = None,
        replicas: int = 1,
    ) -> None:
        self.js = js
        self.replicas = replicas  # of the KZ_SLOTS bucket it makes when missing (the setting nats_replicas)
        self.budgets = Budgets(js)
        self.registry = registry
        self.http = http
        self.guard = guard
        self.only_konnect = only_konnect
        self.concurrency = concurrency
        self.ack_wait = ack_wait
        self.max_deliver = max_deliver
        self.quota = quota
        self.in_doubt: InDoubt = in_doubt
        self._inflight: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._sub: JetStreamContext.PullSubscription | None = None
        self._steps: KeyValue | None = None
        self._fetching = Outage("Fetching runs from NATS", log)
        self._quota_checks = Outage("Task quota checks (api)", log)
        self._delete_acked = False
        self._acked = True  # a run was acknowledged since the last sweep (True: sweep what a restart left)
        self._finished: dict[int, float] = {}  # stream sequence -> when this worker acknowledged it
        self._sweeper: asyncio.Task[None] | None = None
        self._sweeping = Outage("Sweeping finished runs from KZ_RUNS", log)
        self.sweep_seconds = SWEEP_SECONDS
        self._purged = 0  # the runs up to this stream sequence are gone
        self._seen = 0  # the ack floor read one sweep ago
        self._swept: tuple[str, str] | None = None  # the consumer swept: durable, filter subject
        self._blocks: KeyValue | None = None
        self.consumer_max_deliver = consumer_max_deliver or max(CONSUMER_MAX_DELIVER, max_deliver + 1)
        self._advisories: Any = None
        self._slots: Slots | None = None
        self._waiting: set[asyncio.Task[Any]] = set()
        self._wake = asyncio.Event()
        self.max_waiting = MAX_WAITING
        self._active: KeyValue | None = None
        self._cancels: CancelBook | None = None
        #: A run is listed in KZ_ACTIVE once it has gone on this long (ActiveWatch).
        self.listed_after = LISTED_AFTER_SECONDS
        # Waits for a call (KZ_WAITS) and the revisions suspended runs resume on (KZ_REVISIONS).
        self._waits: KeyValue | None = None
        self._revisions: KeyValue | None = None
        self._known_revisions: set[str] = set()

    async def start(self) -> None:
        durable, subject = consumer_for(self.only_konnect)
        config = ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=self.ack_wait,
            max_deliver=self.consumer_max_deliver,
            filter_subject=subject,
        )
        # Create or update: a consumer left by an older runner gets the current lease and delivery settings.
        await self.js.add_consumer(STREAM_RUNS, config=config)
        # A work-queue stream (made by hand) deletes acknowledged runs itself.
        retention = (await self.js.stream_info(STREAM_RUNS)).config.retention
        self._delete_acked = retention != RetentionPolicy.WORK_QUEUE
        self._steps = await StepJournal.bucket(self.js)
        self._blocks = await self.js.key_value(KV_QUOTA_BLOCKS)
        self._slots = Slots(await slots_bucket(self.js, replicas=self.replicas))
        try:
            self._active, cancels = await run_state_buckets(self.js)
            self._cancels = CancelBook(cancels, getattr(self.js, "_nc", None))
            self._cancels.start()
        except Exception as exc:  # an older NATS setup: runs go on, without active entries or cancels
            log.warning("Run control buckets unavailable (%s): runs cannot be listed or cancelled", exc)
        try:
            self._waits, self._revisions = await wait_buckets(self.js)
        except Exception as exc:  # an older NATS setup: delays work, waits for a call fail
            log.warning("Wait buckets unavailable (%s): waits for a call cannot be stored", exc)
        self._sub = await self.js.pull_subscribe(subject, durable=durable, stream=STREAM_RUNS, config=config)
        nc = getattr(self.js, "_nc", None)
        if nc is not None:  # the server's word that it stopped offering a run (max_deliver)
            self._advisories = await nc.subscribe(
                f"{MAX_DELIVERIES_ADVISORY}.{STREAM_RUNS}.{durable}", cb=self._gave_up
            )
        self._loop_task = asyncio.create_task(self._loop(self._sub), name="konnectz-run-worker")
        if self._delete_acked:
            self._swept = (durable, subject)
            self._sweeper = asyncio.create_task(self._sweep(durable, subject), name="konnectz-run-sweep")

    async def stop(self, grace: float = 20.0) -> None:
        """Stop fetching; give running runs ``grace`` seconds (unfinished ones are redelivered later)."""
        # The sweeper first: it sweeps once more below, when the runs in flight are done.
        await stop_task(self._sweeper)
        await stop_task(self._loop_task)
        for waiting in list(self._waiting):  # runs waiting for a slot: redelivered later, in order
            waiting.cancel()
        if self._inflight:
            _done, pending = await asyncio.wait(self._inflight, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._swept is not None:  # what this worker finished leaves KZ_RUNS now (a tick exits next)
            try:
                await asyncio.wait_for(self._sweep_once(*self._swept, last=True), FINAL_SWEEP_SECONDS)
            except Exception as exc:  # left to the next worker's sweep (or max_age)
                log.warning("Sweeping finished runs from %s at stop failed: %s", STREAM_RUNS, exc or type(exc).__name__)
        if self._cancels is not None:
            await self._cancels.stop()
        if self._advisories is not None:
            with contextlib.suppress(Exception):
                await self._advisories.unsubscribe()
        if self._sub is not None:
            # The durable consumer stays on the server; only this process's subscription goes.
            # (Left subscribed, a half-delivered fetch would keep NATS drain waiting.)
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    async def _loop(self, sub: JetStreamContext.PullSubscription) -> None:
        while True:
            # Runs waiting for a konnect slot do not hold a place of the worker's concurrency.
            running = len(self._inflight) - len(self._waiting)
            free = min(self.concurrency - running, self.concurrency + self.max_waiting - len(self._inflight))
            if free <= 0:
                self._wake.clear()
                waker = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait({*self._inflight, waker}, return_when=asyncio.FIRST_COMPLETED)
                waker.cancel()
                continue
            try:
                msgs = await sub.fetch(batch=free, timeout=2.0)
            except (nats.errors.TimeoutError, TimeoutError):  # nats-py also raises the builtin one
                continue
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # disconnected, or the server is restarting
                self._fetching.failed(exc)
                await asyncio.sleep(1.0)
                continue
            self._fetching.ok()
            for msg in msgs:
                task = asyncio.create_task(self.handle(msg))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)

    async def _keep_alive(self, msg: Msg) -> None:
        while True:
            await asyncio.sleep(self.ack_wait / 3)
            with contextlib.suppress(Exception):
                await msg.in_progress()

    async def handle(self, msg: Msg) -> None:
        """One delivery of a run, in order: admission, slot, quota, execute (journalled), publish, ack.

        Each step that hands the run back to JetStream (nak, or a delay's timer stored) ends it here;
        whatever else goes wrong leaves the run unacknowledged, so JetStream redelivers it."""
        admitted = await self._admit(msg)
        if admitted is None:
            return
        run, spec, attempt = admitted
        keep_alive = asyncio.create_task(self._keep_alive(msg))
        slot = await self._slot(msg, run, spec, keep_alive)
        if slot is _HANDED_BACK:
            return
        holding = slot if isinstance(slot, asyncio.Task) else None
        telemetry.RUNS_RUNNING.inc()
        span = telemetry.tracer().start_span(
            "run",
            context=telemetry.context_of(run.traceparent),
            attributes={"konnectz.run_id": run.run_id, "konnectz.konnect_id": run.konnect_id},
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        watch: ActiveWatch | None = None
        journal: StepJournal | None = None
        replies = RESPONDER.set(run_replies(self.js, run))  # respond: the webhook's answer, if its caller waits
        calls = FLOW_CALLS.set(
            FlowCalls(getattr(self.js, "_nc", None), run, spec, waits=self._waits)
        )  # its Call a Flow steps
        try:
            last = attempt >= self.max_deliver
            refusal = await self._quota_refusal(msg, run, spec, last)
            if refusal is _HANDED_BACK:
                return
            watch = self._watch(run, spec, attempt)
            journal = self._journal(run, attempt, last) if refusal is None else None
            event = (
                refused_event(spec, run, refusal)
                if refusal is not None
                else await self._execute(msg, run, spec, attempt, last, watch, journal)
            )
            if event is None:  # handed back to JetStream
                return
            await answer_end(RESPONDER.get(), event)  # respond: when the run ends, unless a step answered
            await self._publish_and_ack(msg, run, event, attempt, span, watch, refusal, journal)
        except Exception as exc:
            # Not acked: JetStream redelivers the run after ack_wait (one line: NATS may be restarting).
            log.warning("Could not complete run %s (%s); it will be redelivered", run.run_id, exc or type(exc).__name__)
            log.debug("Run %s", run.run_id, exc_info=True)
        finally:
            await _flush(journal)  # a result still kept: the run did not end with its event stored
            keep_alive.cancel()
            if watch is not None:
                watch.forget()
            if holding is not None:
                await self._give_slot(run, spec.konnect_id, holding)
            telemetry.RUNS_RUNNING.dec()
            otel_context.detach(token)
            span.end()
            RESPONDER.reset(replies)
            FLOW_CALLS.reset(calls)

    async def _admit(self, msg: Msg) -> tuple[RunRequest, FlowSpec, int] | None:
        """The run, its konnect's spec and the delivery's number; None when the run cannot be taken
        (invalid: dropped; its konnect not loaded here: see :meth:`_not_loaded`)."""
        try:
            run = RunRequest.model_validate_json(msg.data)
        except ValidationError as exc:
            log.error("Dropping an invalid run request on %s: %s", msg.subject, exc)
            await msg.term()
            await self._delete(msg)  # never delivered again: nothing to keep it for
            return None
        attempt = msg.metadata.num_delivered
        spec = self.registry.by_id(run.konnect_id)
        if spec is None:
            await self._not_loaded(msg, run, attempt)
            return None
        if run.resume is not None:  # a delay's or a wait's run coming back (docs/waits.md)
            resumed = await self._resumed(msg, run, spec)
            if resumed is None:
                return None
            run, spec = resumed
        return run, spec, attempt

    async def _slot(
        self, msg: Msg, run: RunRequest, spec: FlowSpec, keep_alive: asyncio.Task[None]
    ) -> asyncio.Task[None] | _Back | None:
        """The konnect's concurrency slot (its holder task), None without a limit (or when the run was
        cancelled while it waited: it ends as CANCELLED before its first step), or
        :data:`_HANDED_BACK` when the run waits in KZ_RUNS (queue full, NATS unavailable)."""
        limit = spec.run_control.max_concurrency if spec.run_control is not None else None
        if limit is None or self._slots is None:
            return None
        try:
            return await self._take_slot(msg, run, spec, limit)
        except StoppedWaiting:  # cancelled while queued: it ends as CANCELLED before its first step
            log.info("Run %s was cancelled while it waited for a slot", run.run_id)
            return None
        except QueueFull as exc:
            log.warning("Run %s waits in KZ_RUNS: %s", run.run_id, exc)
            keep_alive.cancel()
            await msg.nak(delay=QUEUE_FULL_DELAY_SECONDS)
            return _HANDED_BACK
        except BaseException as exc:  # NATS unavailable, or the worker stops: redelivered later
            keep_alive.cancel()
            await self._give_slot(run, spec.konnect_id, None)
            if not isinstance(exc, asyncio.CancelledError):
                log.warning("Run %s: no slot (%s); it will be retried", run.run_id, exc or type(exc).__name__)
                with contextlib.suppress(Exception):
                    await msg.nak(delay=5.0)
                return _HANDED_BACK
            raise

    async def _quota_refusal(self, msg: Msg, run: RunRequest, spec: FlowSpec, last: bool) -> str | _Back | None:
        """Why the run is refused by its owner's task quota (None: admitted), or :data:`_HANDED_BACK`
        when the quota could not be checked and the run is retried later.

        Tasks are reserved once, when the run starts (by run_id, so a redelivery is not counted twice);
        a delayed run that resumes was already admitted."""
        if self.quota is None or run.resume is not None:
            return None
        try:
            decision = await self.quota.reserve(run, spec)
        except QuotaUnavailable as exc:
            self._quota_checks.failed(exc, " (runs wait and are retried)")
            if not last:
                await msg.nak(delay=quota_retry_delay(msg.metadata.num_delivered))
                return _HANDED_BACK
            return f"The run was refused: its task quota could not be checked ({exc})."
        self._quota_checks.ok()
        if decision.allowed:
            return None
        refusal = decision.reason or "The run was refused: task quota exceeded."
        if exhausted(decision):
            await self._block(spec.owner_id, refusal)
        return refusal

    def _watch(self, run: RunRequest, spec: FlowSpec, attempt: int) -> ActiveWatch:
        """The run's entry in KZ_ACTIVE and its cancel check. Listed at once when an entry may exist
        already (QUEUED for a slot, WAITING in a delay, or written by an earlier delivery); otherwise
        only a run still going after ``listed_after`` seconds writes one (docs/run-control.md)."""
        limit = spec.run_control.max_concurrency if spec.run_control is not None else None
        return ActiveWatch(
            self._active,
            self._cancels,
            ActiveRun(
                run_id=run.run_id,
                konnect_id=spec.konnect_id,
                owner_id=spec.owner_id,
                status="RUNNING",
                since=run.resume.started_at if run.resume is not None else datetime.now(UTC),
            ),
            listed_after=0.0 if limit is not None or attempt > 1 or run.resume is not None else self.listed_after,
        )

    def _journal(self, run: RunRequest, attempt: int, last: bool) -> StepJournal | None:
        """The run's step journal (a resumed delay or a redelivery may follow steps that already ran)."""
        if self._steps is None:
            return None
        return StepJournal(
            self._steps,
            run.run_id,
            replay=attempt > 1 or run.resume is not None,
            in_doubt=self.in_doubt,
            wait_busy=not last,
            fold_last=True,  # the last result is flushed here unless the run's TaskEvent is stored
        )

    async def _execute(
        self,
        msg: Msg,
        run: RunRequest,
        spec: FlowSpec,
        attempt: int,
        last: bool,
        watch: ActiveWatch,
        journal: StepJournal | None,
    ) -> TaskEvent | None:
        """The run's TaskEvent, or None when the run was handed back to JetStream (a step busy
        elsewhere, a failure to retry, a delay whose timer is stored).

        No RUNNING entry here: the first step's (watch.at_step) says RUNNING with the step, a few
        microseconds later, for one write to KZ_ACTIVE less per run (docs/performance.md).

        The journal's last result is stored here before the run is handed back or suspends; a run that
        ends keeps it for its TaskEvent (:meth:`_publish_and_ack`)."""
        try:
            result = await execute(
                spec, run, http=self.http, guard=self.guard, journal=journal, watch=watch, budgets=self.budgets
            )
        except StepBusy as exc:  # another delivery of this run may be running that step
            log.info("Run %s: step %s may still be running elsewhere; retrying", run.run_id, exc)
            await _flush(journal)
            await msg.nak(delay=5.0)
            return None
        except Exception as exc:
            await _flush(journal)
            failed = await self._failure(msg, run, spec, attempt, last, exc)
            if failed is None:
                return None
            result = failed
        if isinstance(result, Suspended):
            await _flush(journal)  # before its timer is stored and the run acked: the resumed run reads it
            if await self._suspend(msg, run, result, watch, spec):
                return None
            result = suspension_failed(spec, run, result, "The delay could not be stored; the run stopped here")
        return result

    async def _failure(
        self, msg: Msg, run: RunRequest, spec: FlowSpec, attempt: int, last: bool, exc: Exception
    ) -> TaskEvent | None:
        """A run that raised: retried later (None), or on its last delivery an ERROR event that keeps
        the steps that finished before (in this or an earlier delivery). Called while ``exc`` is handled."""
        if isinstance(exc, nats.errors.Error | TimeoutError | ConnectionError):  # NATS went away
            log.warning("Run %s stopped: NATS unavailable (%s); retrying", run.run_id, exc or type(exc).__name__)
        else:
            log.exception("Run %s failed unexpectedly (delivery %s)", run.run_id, attempt)
        telemetry.RUNS_FAILED.inc()
        if not last:
            await msg.nak(delay=5.0)
            return None
        event = _failed_event(spec.konnect_id, spec.owner_id, spec.name, spec.trigger_id, run, exc)
        done = await self._journaled_steps(run, [step.id for step in spec.steps])
        return event.model_copy(update={"steps": [*done, *event.steps]})

    async def _publish_and_ack(
        self,
        msg: Msg,
        run: RunRequest,
        event: TaskEvent,
        attempt: int,
        span: trace.Span,
        watch: ActiveWatch,
        refusal: str | None,
        journal: StepJournal | None = None,
    ) -> None:
        """Store the run's TaskEvent (with its attempts and trace), clear its KZ_ACTIVE entry, then ack.
        The event is the record of the journal's last result (not stored in ``KZ_STEPS``); when the
        event cannot be stored, that result is."""
        ctx = span.get_span_context()
        event = event.model_copy(
            update={
                "attempts": attempt,
                "replay_of": run.replay_of,
                "trace_id": f"{ctx.trace_id:032x}" if ctx.trace_id else None,
                "span_id": f"{ctx.span_id:016x}" if ctx.span_id else None,
            }
        )
        if run.called_by is not None:  # call a flow: its task log names its caller
            event = event.model_copy(update={"called_by": run.called_by})
        try:
            await self._publish(event)
            await report_end(self.js, self._waits, run, event)  # a caller waiting for it: decided before the ack
        except BaseException:
            # Not stored, or its caller not told: the run comes back, and its last result must be there so
            # the redelivery ends it the same way (the same event, deduplicated; the caller told then).
            await _flush(journal)
            raise
        if journal is not None:
            journal.discard()
        await watch.done()
        await self._done(msg)
        telemetry.RUNS_FINISHED.labels(event.status).inc()
        log.debug("Run %s of konnect %s: %s %s", run.run_id, run.konnect_id, event.status, refusal or "")

    async def _take_slot(self, msg: Msg, run: RunRequest, spec: Any, limit: int) -> asyncio.Task[None]:
        """Wait for a slot of the run's konnect (shown as QUEUED meanwhile); returns the task that
        keeps its lease."""
        assert self._slots is not None
        me = asyncio.current_task()

        async def on_queued() -> None:
            if me is not None:  # a waiting run gives its place in the worker's concurrency to others
                self._waiting.add(me)
                self._wake.set()
            if self._active is not None:
                await put_queued(self._active, spec, run)

        async def cancelled() -> bool:
            if self._cancels is None:
                return False
            try:
                return await self._cancels.cancelled_by(run.run_id) is not None
            except Exception:  # unreadable: it goes on waiting
                return False

        try:
            await self._slots.acquire(
                spec.konnect_id,
                run.run_id,
                msg.metadata.sequence.stream,
                limit,
                on_queued=on_queued,
                give_up=cancelled,
            )
        finally:
            if me is not None:
                self._waiting.discard(me)
        return asyncio.create_task(self._slots.keep(spec.konnect_id, run.run_id))

    async def _give_slot(self, run: RunRequest, konnect_id: int, holding: asyncio.Task[None] | None) -> None:
        if holding is not None:
            holding.cancel()
        if self._slots is None:
            return
        try:
            await asyncio.shield(self._slots.release(konnect_id, run.run_id))
        except BaseException as exc:  # its lease runs out instead
            log.warning("Run %s: its slot was not released (%s)", run.run_id, exc or type(exc).__name__)

    async def _not_loaded(self, msg: Msg, run: RunRequest, attempt: int) -> None:
        """A run for a konnect not loaded here: hand it back to wait, or end it as an ERROR task log."""
        if attempt < self.max_deliver:
            delay = unloaded_delay(attempt)
            if attempt == 1:
                log.warning("Run %s: konnect %s is not loaded here yet; retrying", run.run_id, run.konnect_id)
            await msg.nak(delay=delay)
            return
        reason = (
            f"The run was not executed: konnect {run.konnect_id} was not loaded on any runner after "
            f"{attempt} attempts (it was unpublished, or its runner could not load it)."
        )
        event = ended_event(run, reason, attempt)
        try:
            await self._publish(event)
            await report_end(self.js, self._waits, run, event)
        except Exception as exc:
            log.warning("Run %s: its ERROR event was not stored (%s); retrying", run.run_id, exc or type(exc).__name__)
            await msg.nak(delay=5.0)
            return
        await self._done(msg)
        log.error("Run %s ended as ERROR: %s", run.run_id, reason)

    async def _gave_up(self, advisory: Msg) -> None:
        """The server stopped offering a run (its consumer's max_deliver): every delivery failed to store
        its task event. End it as an ERROR task event (with the steps its journal holds), then delete it."""
        try:
            notice = json.loads(advisory.data)
            seq, deliveries = int(notice["stream_seq"]), int(notice.get("deliveries") or 0)
            stored = await self.js.get_msg(STREAM_RUNS, seq)
            assert stored.data is not None
            run = RunRequest.model_validate_json(stored.data)
        except Exception as exc:  # already deleted (another runner ended it), or not a run
            log.debug("Max-deliveries advisory not handled: %s", exc or type(exc).__name__)
            return
        reason = (
            f"The run was ended after {deliveries} deliveries: none of them could store its outcome "
            f"({self.consumer_max_deliver} at most)."
        )
        spec = self.registry.by_id(run.konnect_id)
        done = await self._journaled_steps(run, [step.id for step in spec.steps] if spec is not None else [])
        event = ended_event(run, reason, deliveries)
        # Steps that ran count their tasks (refused is only for runs that ran nothing).
        event = event.model_copy(update={"steps": [*done, *event.steps], "refused": None if done else reason})
        try:
            await self._publish(event)
        except Exception as exc:  # left to the stream's max_age
            log.error("Run %s: %s Its ERROR event was not stored either (%s).", run.run_id, reason, exc)
            return
        try:
            await report_end(self.js, self._waits, run, event)
        except Exception as exc:  # its caller's wait ends at its timeout
            log.error("Run %s: its caller's wait was not decided (%s)", run.run_id, exc or type(exc).__name__)
        with contextlib.suppress(Exception):
            await self.js.delete_msg(STREAM_RUNS, seq)
        if spec is not None and self._active is not None:
            with contextlib.suppress(Exception):
                await clear_active(self._active, spec.owner_id, spec.konnect_id, run.run_id)
        log.error("Run %s ended as ERROR: %s", run.run_id, reason)

    async def _journaled_steps(self, run: RunRequest, step_ids: list[str]) -> list[StepResult]:
        """The results the step journal holds for ``run`` (steps with effects that finished), in order."""
        if self._steps is None:
            return []
        found: list[StepResult] = []
        for step_id in step_ids:
            try:
                entry = await self._steps.get(step_key(run.run_id, step_id))
                if entry.value and not entry.value.startswith(b'{"started":'):
                    found.append(JournalEntry.model_validate_json(entry.value).result)
            except Exception:  # noqa: S112 - not journaled (or unreadable): nothing to keep
                continue
        return found

    async def _block(self, owner_id: int, reason: str) -> None:
        """No task left: refuse the owner's webhooks at ingress for a while (konnectz_runner.work.quota)."""
        if self._blocks is None:
            return
        try:
            await block_owner(self._blocks, owner_id, reason)
        except Exception as exc:  # a convenience: the run is refused all the same
            log.warning("Could not record that owner %s has no task left: %s", owner_id, exc or type(exc).__name__)

    async def _publish(self, event: TaskEvent) -> None:
        """Store the run's event; one the server finds too large (a NATS or stream tuned below
        Konnectz's limits) is trimmed to :data:`FALLBACK_EVENT_BYTES` and stored again."""
        try:
            await publish_event(self.js, event, ack_timeout=PUBLISH_TIMEOUT_SECONDS)
        except (nats.errors.MaxPayloadError, BadRequestError) as exc:
            if isinstance(exc, BadRequestError) and exc.err_code != _MESSAGE_TOO_LARGE:
                raise
            log.warning("Run %s: its task event is too large for NATS (%s); storing it trimmed", event.run_id, exc)
            fitted, _data = fit_event(event, FALLBACK_EVENT_BYTES)
            await publish_event(self.js, fitted, ack_timeout=PUBLISH_TIMEOUT_SECONDS)

    async def _done(self, msg: Msg) -> None:
        """Acknowledge a finished run; the sweep deletes it from KZ_RUNS (its request now lives in the
        task log) with the other runs finished by then (:meth:`_sweep`)."""
        await msg.ack()
        self._acked = True
        if self._delete_acked and len(self._finished) < MAX_TRACKED:  # a work-queue stream deletes it itself
            self._finished[msg.metadata.sequence.stream] = asyncio.get_running_loop().time()

    async def _delete(self, msg: Msg) -> None:
        """Delete one run message now (a rare case: an invalid run request)."""
        if self._delete_acked:
            with contextlib.suppress(Exception):
                await self.js.delete_msg(STREAM_RUNS, msg.metadata.sequence.stream)

    async def _sweep(self, durable: str, subject: str) -> None:
        """Delete the finished runs from KZ_RUNS: every :data:`SWEEP_SECONDS` while runs are acknowledged,
        read the consumer's ack floor (every run of its subjects up to that stream sequence is
        acknowledged: finished, suspended as a timer, or terminated) and, one sweep later, purge the
        consumer's subjects below it, so two JetStream requests a second whatever the number of runs
        replace one delete per run. Timers (``kz.timers.>``) are other subjects: never purged. A purge
        that fails is done by the next sweep (or left to the stream's max_age). The lag of one sweep
        leaves the max-deliveries advisory's handler (:meth:`_gave_up`, which reads its run by
        sequence) a second to do so. A worker that stops sweeps once more (:meth:`stop`), so a ``tick``
        that runs its fire and exits leaves nothing behind.

        The floor stops at the oldest run not acknowledged yet (a long step, a run waiting for its
        konnect's slot, one handed back for later): the runs this worker acknowledged behind it are
        deleted one by one once they waited :data:`STRAGGLER_SECONDS` (what every run cost before), so
        finished runs do not pile up in KZ_RUNS behind one that goes on."""
        while True:
            await asyncio.sleep(self.sweep_seconds)
            try:
                await self._sweep_once(durable, subject)
                self._sweeping.ok()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # NATS unavailable, or a NATS user without the purge (an older chart)
                self._acked = True
                self._sweeping.failed(exc, " (finished runs stay in KZ_RUNS until it works again)")

    async def _sweep_once(self, durable: str, subject: str, *, last: bool = False) -> None:
        """One sweep; ``last`` (the worker stops): purge up to the floor read now and delete every run
        this worker acknowledged above it."""
        if self._seen > self._purged:
            await self.js.purge_stream(STREAM_RUNS, seq=self._seen + 1, subject=subject)
            self._purged = self._seen
        if not (self._acked or self._finished):
            return
        self._acked = False
        info = await self.js.consumer_info(STREAM_RUNS, durable)
        floor = info.ack_floor.stream_seq if info.ack_floor is not None else 0
        self._seen = max(self._seen, int(floor or 0))
        if last and self._seen > self._purged:
            await self.js.purge_stream(STREAM_RUNS, seq=self._seen + 1, subject=subject)
            self._purged = self._seen
        await self._delete_stragglers(self._seen, every=last)

    async def _delete_stragglers(self, floor: int, *, every: bool = False) -> None:
        """Forget the acknowledged runs at or below ``floor`` (a purge takes them); delete those that
        waited above it for :data:`STRAGGLER_SECONDS` (``every``: all of them)."""
        limit = asyncio.get_running_loop().time() - STRAGGLER_SECONDS
        behind: list[int] = []
        for seq, acked_at in list(self._finished.items()):
            if seq <= floor:
                del self._finished[seq]
            elif (every or acked_at <= limit) and len(behind) < MAX_STRAGGLERS_PER_SWEEP:
                behind.append(seq)
        for seq in behind:
            del self._finished[seq]
            with contextlib.suppress(Exception):  # gone already (purged, or max_age)
                await self.js.delete_msg(STREAM_RUNS, seq)

    async def _suspend(
        self,
        msg: Msg,
        run: RunRequest,
        suspended: Suspended,
        watch: ActiveWatch | None = None,
        spec: FlowSpec | None = None,
    ) -> bool:
        """Store the run's continuation as a timer, then ack. False only on the last delivery's failure."""
        waiting = run.model_copy(update={"resume": suspended.continuation})
        try:
            if await self._store_wait(spec, waiting):  # called before it got here
                await self._done(msg)
                return True
            await schedule_continuation(self.js, waiting, suspended.resume_at, suspended.continuation.after_step)
        except Unstorable as exc:  # the run's data grew past what a stored run may hold
            log.error("Run %s: the delay could not be stored (%s)", run.run_id, exc)
            return False
        except Exception as exc:
            if msg.metadata.num_delivered >= self.max_deliver:
                log.error("Run %s: the delay could not be stored (%s)", run.run_id, exc or type(exc).__name__)
                return False
            log.warning("Run %s: the delay could not be stored (%s); retrying", run.run_id, exc or type(exc).__name__)
            await msg.nak(delay=5.0)
            return True
        if watch is not None:
            wait = suspended.continuation.wait
            await watch.waiting(
                suspended.continuation.after_step,
                suspended.resume_at,
                waiting_for=(wait.waiting_for or WAITING_FOR) if wait is not None else None,
                since=wait.since if wait is not None else None,
            )
        await self._done(msg)
        # respond: 202 with the run id (a wait for a call keeps its caller held until the Webhook's timeout)
        await answer_waiting(RESPONDER.get(), run.run_id, for_call=suspended.continuation.wait is not None)
        log.info("Run %s of konnect %s waits until %s", run.run_id, run.konnect_id, suspended.resume_at.isoformat())
        return True

    # --- waits for a call and revisions (docs/waits.md) ---

    async def _store_wait(self, spec: FlowSpec | None, waiting: RunRequest) -> bool:
        """Keep the revision the run resumes on, and a wait's KZ_WAITS entry. True when a call came
        before the run reached its wait: the run was resumed at once (no timer)."""
        if spec is not None and self._revisions is not None:
            await remember_revision(self._revisions, spec, self._known_revisions)
        assert waiting.resume is not None
        if waiting.resume.wait is None:
            return False
        if self._waits is None:
            raise RuntimeError("the KZ_WAITS bucket is unavailable")
        return await store_waiting(self.js, self._waits, waiting)

    async def _resumed(self, msg: Msg, run: RunRequest, spec: FlowSpec) -> tuple[RunRequest, FlowSpec] | None:
        """A run coming back from a delay or a wait: its wait decided (None: this delivery is dropped or
        handed back), on the revision it started with."""
        resume = run.resume
        assert resume is not None
        try:
            if resume.wait is not None:
                if self._waits is None:
                    raise RuntimeError("the KZ_WAITS bucket is unavailable")

                async def cancelled() -> bool:
                    return self._cancels is not None and await self._cancels.cancelled_by(run.run_id) is not None

                decided = await wait_on_delivery(self.js, self._waits, run, msg.metadata.num_delivered, cancelled)
                if decided is None:  # a call decided it (or this is a duplicate): nothing to run
                    log.info(
                        "Run %s: a delivery of its wait %s dropped (decided already)", run.run_id, resume.after_step
                    )
                    await self._done(msg)
                    return None
                run = decided
            if resume.revision is not None and spec.revision != resume.revision and self._revisions is not None:
                kept = await load_revision(self._revisions, spec.konnect_id, resume.revision)
                if kept is None:
                    log.warning(
                        "Run %s: revision %s is not kept; it resumes on the current one", run.run_id, resume.revision
                    )
                else:
                    spec = kept.model_copy(update={"resource_uid": spec.resource_uid})
        except Exception as exc:  # NATS unavailable: handed back
            log.warning("Run %s: its wait could not be read (%s); retrying", run.run_id, exc or type(exc).__name__)
            with contextlib.suppress(Exception):
                await msg.nak(delay=5.0)
            return None
        return run, spec


def ended_event(run: RunRequest, reason: str, attempts: int) -> TaskEvent:
    """The ERROR task event of a run the runner ended without running it (again): why, in one step."""
    event = runner_error_event(
        run,
        reason,
        konnect_id=run.konnect_id,
        owner_id=0,  # unknown here: the api takes the konnect's owner
        konnect_name="",
        trigger_id="trigger",
        trigger_output=run.trigger_output,
        step_id="trigger",
        refused=reason,
        attempts=attempts,
        replay_of=run.replay_of,
    )
    return event.model_copy(update={"called_by": run.called_by})


def unloaded_delay(attempt: int) -> float:
    """Seconds before a run whose konnect is not loaded is offered again: 1, 2, 4, 8, then 10."""
    return float(min(2 ** (attempt - 1), 10))


def _failed_event(
    konnect_id: int, owner_id: int, name: str, trigger_id: str, run: RunRequest, exc: Exception
) -> TaskEvent:
    return runner_error_event(
        run,
        f"The runner could not execute this run: {type(exc).__name__}: {exc}",
        konnect_id=konnect_id,
        owner_id=owner_id,
        konnect_name=name,
        trigger_id=trigger_id,
        trigger_output=run.trigger_output,
        step_id=trigger_id,
    )


class WorkerThread:
    """A :class:`RunWorker` on its own event loop in a thread, with its own NATS connection and HTTP
    client pool, so the ingress loop under load cannot crowd execution out (and back-pressure, not
    an unbounded backlog, answers when execution falls behind). The konnect registry is shared."""

    def __init__(self, settings: Any, registry: KonnectRegistry, guard: NetGuard, only_konnect: int | None) -> None:
        self.settings = settings
        self.registry = registry
        self.guard = guard
        self.only_konnect = only_konnect
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    async def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="konnectz-run-worker", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._started.wait)
        if self._error is not None:
            raise self._error

    async def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            await asyncio.to_thread(self._thread.join, 40)

    def _main(self) -> None:
        # uvloop (installed with uvicorn[standard], which runs the ingress loop on it too) when present.
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvicorn[standard] brings it
            asyncio.run(self._serve())
            return
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        telemetry.watch_loop("run worker", self._loop)
        self._stop = asyncio.Event()
        try:
            # Its own outage lines (nats-py's default error callback prints a traceback per reconnect attempt).
            outage = Outage(f"NATS at {self.settings.nats_url} (worker)", log)
            nc = await connect_nats(self.settings, **nats_callbacks(outage))
            http = outbound.step_client(
                outbound_transport(self.guard, self.settings.http_client),
                timeout=self.settings.http_timeout_seconds,
                user_agent=USER_AGENT,
            )
            worker = RunWorker(
                nc.jetstream(),
                self.registry,
                http=http,
                guard=self.guard,
                only_konnect=self.only_konnect,
                concurrency=self.settings.worker_concurrency,
                in_doubt=self.settings.in_doubt_steps,
                replicas=self.settings.nats_replicas,
                quota=NatsQuotaGate(nc, timeout=self.settings.quota_timeout_seconds)
                if self.settings.enforce_quota
                else None,
            )
            await worker.start()
        except BaseException as exc:
            self._error = exc
            self._started.set()
            return
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            await worker.stop()
            await http.aclose()
            try:
                await asyncio.wait_for(nc.drain(), 10)
            except Exception:
                await nc.close()
