"""The step journal: each finished step's result, kept durably by (run id, step id).

A run message that is redelivered (its runner died, or could not publish the run's task event)
executes again from the start. Without a record of what already ran, every API call, app
action or data forward before the crash would be sent twice. The worker therefore writes each
finished step that can have an effect outside the run into the ``KZ_STEPS`` JetStream
key/value bucket before the next step starts, and a redelivery (``num_delivered > 1``) reads
it back: a recorded step is not executed again, its recorded outcome is used instead, so the
run resumes after its last finished step.

- Key: ``sha256(run_id, step_id, item_index)`` (hex, 40 characters): derived from the run and
  the step, never random, so every delivery of a run finds the same entries. A step after an
  iterator has one entry per item.
- Value: the step's :class:`~konnectz_contracts.events.StepResult` plus its raw output (what later
  steps reference).
- Kinds in :data:`PURE_KINDS` only compute from their inputs (a filter, a formatter, ...):
  running them again changes nothing outside the run, so they are not journaled. A delay is
  journaled with its ``resume_at``: a run redelivered after it suspended (its ack was lost when
  NATS died) suspends again until the same time, and its timer (same ``Nats-Msg-Id``) is stored
  once, instead of the delay being computed afresh and the run going on twice.
- The bucket keeps entries for :data:`~konnectz_contracts.events.STEPS_RETENTION_SECONDS` (longer than any
  redelivery takes).

Why a JetStream bucket and not PostgreSQL: the runner never depends on the database (the api
owns it), the run message already lives in JetStream on the same server, and a KV put is one
acknowledged JetStream publish (about 0.1 to 0.3 ms here).

Steps in doubt: a runner that dies *while* a step runs (the request may or may not have reached
the other side) leaves the step's ``started`` mark without a result. What a redelivery does with
such a step is the ``in_doubt`` policy (setting ``KONNECTZ_IN_DOUBT_STEPS``):

- ``fail`` (the default, at most once): the step is not run again; it ends as an ERROR saying
  why, so the run's task log shows it and the run can be replayed once the target was checked.
  The mark costs one more KV put per step with effects.
- ``retry`` (at least once): the step runs again; its effect may happen twice.

The last result of a run (issue 34): under the ``fail`` policy, with ``fold_last`` (the worker's
journals), a result without a ``resume_at`` is not put at once but kept until the journal is next
used: a later step with effects puts it before it starts (:meth:`StepJournal.flush`), and so does the
worker whenever the run does not end with its TaskEvent stored (a delay, a failure, a step busy
elsewhere, an event it could not store). A run whose TaskEvent was stored drops it
(:meth:`StepJournal.discard`): the event, stored with ``Nats-Msg-Id = run_id``, is the record, so a
Webhook -> API Call run writes one entry to ``KZ_STEPS`` (the mark), not two. Should the ack of that
run be lost and the run come back, its last step with effects is in doubt and not repeated; the ERROR
event of that delivery has the same ``Nats-Msg-Id`` and run id, so JetStream (within its duplicate
window) and the api (unique ``run_id``) keep the event stored first. A runner that dies between the
step's end and the event's store leaves the step in doubt, as one that died between the step's end and
its result's put did before: either window is one JetStream publish.

A mark younger than :data:`BUSY_SECONDS` may belong to a step that is still running in another
worker (the same run can be delivered twice at once: a run whose ack was lost when NATS died,
next to its delay's timer): :class:`StepBusy` makes the worker hand the run back for a few seconds
instead of judging the step in doubt. The mark is written under the ``fail`` policy only.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from datetime import datetime
from typing import Any, Literal

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from pydantic import AwareDatetime, BaseModel, ConfigDict

from konnectz_contracts.events import KV_STEPS, StepResult
from konnectz_runner.engine.context import Outcome, SubStepInDoubt

__all__ = [
    "BUSY_SECONDS",
    "IN_DOUBT_ERROR",
    "PURE_KINDS",
    "InDoubt",
    "JournalEntry",
    "StepBusy",
    "StepJournal",
    "SubStepJournal",
    "step_key",
]

log = logging.getLogger(__name__)

# Step kinds without effects outside the run: running them again is harmless.
# respond: the ingress takes a request's first answer only, so answering again on a redelivery is harmless.
PURE_KINDS = frozenset({"filter", "formatter", "splitter", "iterator", "router", "join", "respond"})
# Journaled kinds without effects outside the run: never in doubt, so no started mark.
# A Call a Flow starts its called run under a run id derived from its run and step: started again after a
# crash, the same run is stored once (JetStream's Msg-Id, the task log's run id), so it is never in doubt.
# agent: its tool calls are marked one by one (:class:`SubStepJournal`), so a runner killed mid-loop
# resumes the loop instead of judging the whole step in doubt.
_UNMARKED_KINDS = frozenset({"delay", "wait", "call_flow", "agent"})


def step_key(run_id: str, step_id: str, item_index: int | None = None) -> str:
    item = "" if item_index is None else str(item_index)
    return hashlib.sha256(f"{run_id}\x00{step_id}\x00{item}".encode()).hexdigest()[:40]


InDoubt = Literal["fail", "retry"]
IN_DOUBT_ERROR = (
    "The runner stopped while this step was running, so it is not known whether its request took "
    "effect. It was not run again, so that it cannot take effect twice: check the target, then replay "
    "the run if needed."
)
# How long a worker whose started mark may not have been stored tries to take it back.
UNMARK_SECONDS = 8.0
# A started mark this recent may be a step still running elsewhere (ack wait 10 s plus a margin).
BUSY_SECONDS = 15.0
# How long a step's result is put again while JetStream does not acknowledge it, and how often.
RECORD_SECONDS = 8.0
RECORD_RETRY_SECONDS = 0.5


class StepBusy(Exception):
    """The step may still be running in another delivery of the same run: try the run again later."""


def _started_at(value: bytes) -> float | None:
    """The time in a started mark, or None when ``value`` is a result."""
    if not value.startswith(b'{"started":'):
        return None
    return float(json.loads(value)["started"])


class JournalEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    result: StepResult
    output: Any = None  # the raw output later steps reference
    resume_at: AwareDatetime | None = None  # a delay's suspension


class StepJournal:
    """The journal of one delivery of one run."""

    def __init__(
        self,
        kv: KeyValue,
        run_id: str,
        *,
        replay: bool,
        in_doubt: InDoubt = "fail",
        wait_busy: bool = True,
        fold_last: bool = False,
    ) -> None:
        self.kv = kv
        # The last result kept for the run's TaskEvent (fail policy only: under retry, a lost ack would
        # repeat the step); the worker then calls flush() or discard() (see the module's docstring).
        self.fold_last = fold_last and in_doubt == "fail"
        self._pending: tuple[str, bytes, str] | None = None  # key, value, step id
        self.wait_busy = wait_busy  # False on the last attempt: a busy step is then in doubt
        self.run_id = run_id
        self.replay = replay  # a redelivery: look for steps that finished before
        self.in_doubt = in_doubt
        self.recalled = 0
        self.doubtful = 0

    @staticmethod
    async def bucket(js: JetStreamContext) -> KeyValue:
        return await js.key_value(KV_STEPS)

    @staticmethod
    def journaled(kind: str) -> bool:
        return kind not in PURE_KINDS

    async def recall(self, step_id: str, item_index: int | None) -> tuple[StepResult | None, Outcome] | None:
        """The recorded result of this step in an earlier delivery, or None (run it).

        A step that started but has no result (its runner died meanwhile) gives, under the ``fail``
        policy, an ERROR outcome without a result (the engine records it as this delivery's).
        """
        if not self.replay:
            return None
        try:
            entry = await self.kv.get(step_key(self.run_id, step_id, item_index))
        except KeyNotFoundError:
            return None
        if not entry.value:
            return None
        started = _started_at(entry.value)
        if started is not None:
            if self.wait_busy and time.time() - started < BUSY_SECONDS:
                raise StepBusy(step_id)
            if self.in_doubt == "retry":
                return None
            self.doubtful += 1
            log.warning(
                "Run %s: step %s was in doubt (its runner stopped while it ran); not repeated", self.run_id, step_id
            )
            return None, Outcome.failed(IN_DOUBT_ERROR)
        recorded = JournalEntry.model_validate_json(entry.value)
        result = recorded.result
        self.recalled += 1
        outcome = Outcome(
            # a journaled step is never SKIPPED; a continued failure let the run go on (on_error)
            status="ERROR" if result.status == "ERROR" and not result.continued else "SUCCESS",
            output=recorded.output,
            input=result.input,
            error=result.error,
            stop=result.stop,
            resume_at=recorded.resume_at,
        )
        return result, outcome

    def substeps(self, step_id: str, item_index: int | None) -> SubStepJournal:
        """The journal of the parts of step ``step_id`` (of item ``item_index``)."""
        return SubStepJournal(self, step_id, item_index)

    @staticmethod
    def marked(kind: str) -> bool:
        return kind not in PURE_KINDS and kind not in _UNMARKED_KINDS

    async def begin(self, step_id: str, item_index: int | None) -> None:
        """Mark the step as started (only under the ``fail`` policy), before its effect can happen.

        Raises :class:`StepBusy` when another delivery of the run marked it first."""
        await self.flush()  # the results before this step are stored before its effect can happen
        if self.in_doubt == "fail":
            mark = json.dumps({"started": time.time()}).encode()
            key = step_key(self.run_id, step_id, item_index)
            try:  # atomic: of two deliveries of the same run, one starts the step
                await self.kv.create(key, mark)
            except KeyWrongLastSequenceError as exc:
                raise StepBusy(step_id) from exc
            except Exception:
                # Unknown whether the mark was stored (NATS went away): the step surely did not
                # run, so take the mark back if NATS returns soon, lest a redelivery judge it in doubt.
                await self._unmark(key)
                raise

    async def _unmark(self, key: str) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + UNMARK_SECONDS
        while loop.time() < give_up:
            try:
                await self.kv.delete(key)
                return
            except Exception:
                await asyncio.sleep(0.5)

    async def record(self, result: StepResult, output: Any, resume_at: datetime | None = None) -> None:
        """Store the step's result; raises when JetStream did not acknowledge it within
        :data:`RECORD_SECONDS` (the run is then retried rather than going on with a step that could
        run twice).

        The step has taken effect by now: a put that fails (the bucket's leader was lost and the
        others elect a new one, a few seconds) is put again, the same value under the same key, until
        acknowledged. Given up at once, the redelivery would find the started mark without a result
        and end the run IN_DOUBT although the step ran once and its runner never stopped (seen on a
        real node when a NATS pod of three was deleted under load)."""
        entry = JournalEntry(result=result, output=output, resume_at=resume_at)
        key, value = step_key(self.run_id, result.step_id, result.item_index), entry.model_dump_json().encode()
        await self.flush()
        if self.fold_last and resume_at is None:
            self._pending = (key, value, result.step_id)
            return
        await self._put(key, value, result.step_id)

    async def flush(self) -> None:
        """Store the result kept for the TaskEvent (if any): the run goes on, or ends otherwise."""
        if self._pending is not None:
            key, value, step_id = self._pending
            await self._put(key, value, step_id)
            self._pending = None

    def discard(self) -> None:
        """The run's TaskEvent is stored: it is the record of the result kept for it."""
        self._pending = None

    async def _put(self, key: str, value: bytes, step_id: str) -> None:
        loop = asyncio.get_running_loop()
        give_up = loop.time() + RECORD_SECONDS
        while True:
            try:
                await self.kv.put(key, value)
                return
            except Exception as exc:
                if loop.time() >= give_up:
                    raise
                log.warning("Run %s: result of step %s not stored yet (%r); again", self.run_id, step_id, exc)
                await asyncio.sleep(RECORD_RETRY_SECONDS)


class SubStepJournal:
    """The journal of the parts of one step of one run (:class:`~konnectz_runner.engine.context.SubSteps`):
    keys ``step_key(run, "<step id>/<name>", item)``, values JSON. A part with effects (a tool call) is
    marked as started (:meth:`begin`, under the ``fail`` policy) before it runs; a redelivery that finds
    the mark without a value raises :class:`SubStepInDoubt` (or :class:`StepBusy` while the mark is young),
    so a part is never run twice."""

    def __init__(self, journal: StepJournal, step_id: str, item_index: int | None) -> None:
        self.journal = journal
        self.step_id = step_id
        self.item_index = item_index

    def _key(self, name: str) -> str:
        return step_key(self.journal.run_id, f"{self.step_id}/{name}", self.item_index)

    async def recall(self, name: str) -> Any:
        if not self.journal.replay:
            return None
        try:
            entry = await self.journal.kv.get(self._key(name))
        except KeyNotFoundError:
            return None
        if not entry.value:
            return None
        started = _started_at(entry.value)
        if started is not None:
            if self.journal.wait_busy and time.time() - started < BUSY_SECONDS:
                raise StepBusy(f"{self.step_id}/{name}")
            if self.journal.in_doubt == "retry":
                return None
            self.journal.doubtful += 1
            raise SubStepInDoubt(name)
        self.journal.recalled += 1
        return json.loads(entry.value)["value"]

    async def begin(self, name: str) -> None:
        if self.journal.in_doubt != "fail":
            return
        key = self._key(name)
        try:
            await self.journal.kv.create(key, json.dumps({"started": time.time()}).encode())
        except KeyWrongLastSequenceError as exc:
            raise StepBusy(f"{self.step_id}/{name}") from exc
        except Exception:
            await self.journal._unmark(key)
            raise

    async def record(self, name: str, value: Any) -> None:
        key, data = self._key(name), json.dumps({"value": value}, ensure_ascii=False).encode()
        loop = asyncio.get_running_loop()
        give_up = loop.time() + RECORD_SECONDS
        while True:
            try:
                await self.journal.kv.put(key, data)
                return
            except Exception as exc:
                if loop.time() >= give_up:
                    raise
                log.warning(
                    "Run %s: part %s of step %s not stored yet (%r); again",
                    self.journal.run_id,
                    name,
                    self.step_id,
                    exc,
                )
                await asyncio.sleep(RECORD_RETRY_SECONDS)
